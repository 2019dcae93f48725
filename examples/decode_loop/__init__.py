"""A real decode loop to measure end to end: `python -m examples.decode_loop --help`."""
