"""Launch-parameter variants of the decode kernels, timed by the benchmark next to the
project's kernels so that tuning choices are measured before they move into
``kernels/decode_attention/``."""
