"""Triton kernels and documentation decorators are no public API of their own.

A `@triton.jit` kernel is launched by the package's host wrappers, which are the API; its
parameter order is the launch code's business. A documentation decorator
(`@add_start_docstrings_to_model_forward(...)`, or one the repository defines that sets
`fn.__doc__` and returns `fn`) hands back the function it decorates, signature and all.
Both are defaults the policy can change (`api.internal_decorators`, `api.transparent_decorators`).
"""

from __future__ import annotations

import pytest

from gates.python_api.api_surface import diff_surfaces, module_surface
from gates.python_api.module_scope import module_reader

PATH = "kernels/softmax.py"

KERNEL = '''\
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(out_ptr, in_ptr, stride, n_rows, n_cols, BLOCK: tl.constexpr):
    pass


def softmax(x, *, dim=-1):
    return x
'''

REORDERED = KERNEL.replace("stride, n_rows, n_cols,", "n_rows, n_cols, stride,")

AUTOTUNED = KERNEL.replace("@triton.jit\n", "@triton.autotune(configs=[], key=['n_cols'])\n@triton.jit\n")

MODEL = '''\
from transformers.utils import add_start_docstrings_to_model_forward

DOCS = "Args: hidden_states"


class DecoderLayer:
    @add_start_docstrings_to_model_forward(DOCS)
    def forward(self, hidden_states, attention_mask=None):
        return hidden_states
'''

OWN_DOCS = '''\
def add_docs(*text):
    def decorate(fn):
        fn.__doc__ = "".join(text) + (fn.__doc__ or "")
        return fn
    return decorate


def rms_norm(x, weight, *, eps=1e-6):
    return x
'''


def diff(old: str, new: str, **rules) -> list[str]:
    read_module = module_reader({PATH: None}.get)
    return [c.message for c in diff_surfaces(module_surface(old, PATH, read_module=read_module, **rules),
                                             module_surface(new, PATH, read_module=read_module, **rules))]


def test_a_triton_kernel_is_no_public_api():
    assert diff(KERNEL, REORDERED) == []
    assert diff(AUTOTUNED, AUTOTUNED.replace("stride, n_rows, n_cols,", "n_rows, n_cols, stride,")) == []


def test_the_host_wrapper_beside_it_still_is():
    assert diff(KERNEL, KERNEL.replace("*, dim=-1", "*, axis=-1")) == [
        "kernels.softmax.softmax: parameter 'dim' removed (renamed to 'axis'?)"]


def test_a_kernel_the_module_lists_in_all_is_public():
    exported = KERNEL.replace("import triton\n", "import triton\n\n__all__ = ['softmax', 'softmax_kernel']\n", 1)
    assert diff(exported, exported.replace("stride, n_rows, n_cols,", "n_rows, n_cols, stride,")) != []


def test_the_policy_can_make_kernels_public_api():
    assert diff(KERNEL, REORDERED, internal_decorators=()) == [
        "kernels.softmax.softmax_kernel: parameter 'stride' moved from position 3 to 5",
        "kernels.softmax.softmax_kernel: parameter 'n_rows' moved from position 4 to 3",
        "kernels.softmax.softmax_kernel: parameter 'n_cols' moved from position 5 to 4"]


def test_a_documentation_decorator_keeps_the_signature():
    undecorated = MODEL.replace("    @add_start_docstrings_to_model_forward(DOCS)\n", "")
    assert diff(MODEL, undecorated) == []
    assert diff(undecorated, MODEL) == []


def test_the_policy_decides_which_outside_decorators_keep_the_signature():
    undecorated = MODEL.replace("    @add_start_docstrings_to_model_forward(DOCS)\n", "")
    assert diff(MODEL, undecorated, transparent_decorators=()) == [
        "'kernels.softmax.DecoderLayer.forward' is no longer decorated with "
        "@transformers.utils.add_start_docstrings_to_model_forward(DOCS), which may change its signature or how it is "
        "called (the checker sees through functools.wraps pass-through wrappers, lru_cache, no_grad and TorchDynamo's "
        "disable; a decorator that keeps the signature, the repository's own or a library's, can be listed in the "
        "base policy's api.transparent_decorators)"]


CONTIGUOUS = '''\
import functools


def ensure_contiguous(fn):
    @functools.wraps(fn)
    def wrapper(ctx, *args, **kwargs):
        args = [arg.contiguous() if hasattr(arg, "contiguous") else arg for arg in args]
        return fn(ctx, *args, **kwargs)
    return wrapper


class SwiGLUFunction:
    @staticmethod
    @ensure_contiguous
    def forward(ctx, a, b):
        return a
'''


def test_the_policy_can_name_the_repository_s_own_decorator_that_keeps_the_signature():
    # liger-kernel's `ensure_contiguous` hands on changed arguments, so it is not seen through as a pass-through
    undecorated = CONTIGUOUS.replace("    @ensure_contiguous\n", "")
    assert len(diff(CONTIGUOUS, undecorated)) == 1
    assert diff(CONTIGUOUS, undecorated, transparent_decorators=("kernels.softmax.ensure_contiguous",)) == []


@pytest.mark.parametrize("decorator", ["@torch.compiler.disable", "@torch.compiler.disable(recursive=False)",
                                       "@torch._dynamo.disable"])
def test_dynamo_s_opt_out_keeps_the_signature(decorator):
    # SageAttention adds and drops `@torch.compiler.disable` on its entry points, which pass through `functools.wraps`
    plain = "import torch\n\n\ndef attn(q, k, v, *, scale=None):\n    return q\n"
    decorated = plain.replace("def attn", decorator + "\ndef attn")
    assert diff(plain, decorated) == [] and diff(decorated, plain) == []
    assert diff(decorated, decorated.replace(", *, scale=None", "")) == [
        "kernels.softmax.attn: parameter 'scale' removed"]


def test_a_decorator_s_arguments_are_shown_as_written():
    op = 'import torch\n\n\n@torch.library.custom_op("mylib::attn_op", mutates_args=())\ndef attn_op(q):\n    return q\n'
    [message] = diff(op, op.replace("mutates_args=()", 'mutates_args=("q",)'))
    assert "@torch.library.custom_op('mylib::attn_op', mutates_args=('q',))" in message


def test_a_documentation_decorator_the_repository_defines_keeps_the_signature():
    decorated = OWN_DOCS.replace("def rms_norm", "@add_docs('Root-mean-square norm.')\ndef rms_norm")
    assert diff(OWN_DOCS, decorated) == []


def test_a_decorator_that_hands_back_something_else_is_still_a_change():
    swapping = OWN_DOCS.replace("        return fn\n", "        return lambda x: fn(x, None)\n") \
        .replace("def rms_norm", "@add_docs('Root-mean-square norm.')\ndef rms_norm")
    assert any("is now decorated with @kernels.softmax.add_docs" in c for c in diff(OWN_DOCS, swapping))


def test_a_documentation_decorator_that_touches_the_signature_is_still_a_change():
    patching = OWN_DOCS.replace('fn.__doc__ = "".join(text) + (fn.__doc__ or "")', "fn.__defaults__ = (None,)") \
        .replace("def rms_norm", "@add_docs('Root-mean-square norm.')\ndef rms_norm")
    assert diff(OWN_DOCS, patching) != []


def test_a_constexpr_that_triton_heuristics_computes_is_no_new_required_parameter():
    """fla lists a kernel in `__all__`; `HAS_BIAS` comes from `@triton.heuristics`, never from a caller."""
    from gates.python_api.api_surface import diff_surfaces, module_surface

    head = '''import triton
import triton.language as tl

__all__ = ["kernel_fwd"]

@triton.heuristics({"HAS_BIAS": lambda args: args["bias"] is not None})
@triton.jit
def kernel_fwd(x, bias, BLOCK: tl.constexpr, HAS_BIAS: tl.constexpr, GROUP: tl.constexpr):
    pass
'''
    base = head.replace('@triton.heuristics({"HAS_BIAS": lambda args: args["bias"] is not None})\n', "").replace(
        ", HAS_BIAS: tl.constexpr, GROUP: tl.constexpr", "")
    changes = [c.message for c in diff_surfaces(module_surface(base, "pkg/k.py", module="pkg.k"),
                                                  module_surface(head, "pkg/k.py", module="pkg.k"))]
    assert changes == ["pkg.k.kernel_fwd: new parameter 'GROUP' has no default (callers break)"]
