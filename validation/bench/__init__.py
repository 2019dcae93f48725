"""Benchmark harness of the decode-attention kernels: correctness against the fp64
reference first, then timing against the memory ceilings and the peers, written as a
`benchmark` evidence artifact and a Markdown report. Run `python -m validation.bench`."""
