"""A tiny stand-in for a kernel package, used by the golden example records."""

from examplepkg.ops import single_pass_sum, split_sum

__all__ = ["single_pass_sum", "split_sum"]
