"""Validation of the decode-attention kernels: fp64 oracle, metrics, tolerances, the
shape matrix, seeded fixtures, bitwise anchors, fingerprints and evidence artifacts."""
