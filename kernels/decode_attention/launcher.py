"""One Triton kernel launch with fixed arguments, replayed cheaply.

`KernelLaunch` holds everything of a launch but its tensors: the kernel, the grid, the
scalar arguments, the compile-time constants and the launch options. Calling it with the
tensors launches the kernel through `kernel[grid](...)`, Triton's own path, which binds
the arguments, computes the specialization key and looks the compiled kernel up on every
call (tens of microseconds of Python on a GPU host).

On a GPU, after that first launch, it records once what Triton hands to the compiled
kernel's launcher for these arguments (the grid, the stream, the function handle, the
packed metadata, and the argument list in the order and form this Triton version uses)
by swapping the launcher for a recorder during one more `kernel[grid](...)` call, which
then launches nothing. Later calls replay that call with the new tensors put where the
old ones were: the same launcher, the same compiled kernel, nothing re-derived. This
relies on no particular Triton version's launcher signature; where the recording does
not look exactly as expected (another argument layout, another compiled kernel, a
grid or stream that differ), or `DESIGN_GATES_DECODE_FAST_LAUNCH=0`, the launch
keeps Triton's path, and so does every call while a launch hook (a profiler) is
installed. A replayed launch that raises falls back to Triton's path for
good. The caller guarantees that a later call's tensors have the dtypes, shapes, strides,
devices and 16-byte alignment of the first call's (the compiled kernel is specialized on
them), and that the current device is the same (api.py keys its plans on all of it).
"""

from __future__ import annotations

import os

FAST_LAUNCH_ENV = "DESIGN_GATES_DECODE_FAST_LAUNCH"
_MISSING = object()


def _hook_active(hook) -> bool:
    """A launch hook that does something: not None, and not an empty chain (Triton 3.5+'s HookChain)."""
    if hook is None:
        return False
    calls = getattr(hook, "calls", None)
    return not isinstance(calls, list) or len(calls) > 0


def _launch_hooks_function():
    """A function telling whether Triton launch hooks (profilers) are installed now."""
    try:
        from triton import knobs

        runtime = knobs.runtime
        return lambda: _hook_active(runtime.launch_enter_hook) or _hook_active(runtime.launch_exit_hook)
    except (ImportError, AttributeError):
        try:
            from triton.compiler.compiler import CompiledKernel
        except ImportError:  # pragma: no cover - no Triton compiler at all
            return lambda: True
        return lambda: (_hook_active(getattr(CompiledKernel, "launch_enter_hook", None))
                        or _hook_active(getattr(CompiledKernel, "launch_exit_hook", None)))


launch_hooks_installed = _launch_hooks_function()


def fast_launch_enabled(environ=None) -> bool:
    """False when DESIGN_GATES_DECODE_FAST_LAUNCH is "0"."""
    return (os.environ if environ is None else environ).get(FAST_LAUNCH_ENV, "1").strip() != "0"


class KernelLaunch:
    """A launch of `kernel` over `grid`: tensors picked per call, everything else fixed.

    Args:
        kernel: a `@triton.jit` function (or anything indexable by a grid and callable).
        grid: the launch grid (a tuple of ints).
        tensor_names: the kernel's leading parameters, filled per call from the tensors
            passed to `__call__` (`picks[i]` is the index of parameter i's tensor).
        picks: as above.
        scalars: the values of the parameters that follow, in order.
        options: compile-time constants by name and launch options (num_warps, ...).
        direct: try the recorded direct launch on a GPU (False on the interpreter).
        keyword_tensors: later parameters filled per call by keyword, name -> index of
            its tensor in the tensors passed to `__call__` (parameters a kernel gained at
            the end of its signature).
    """

    def __init__(self, kernel, grid, tensor_names, picks, scalars, options, *, direct, keyword_tensors=None):
        self.kernel = kernel
        self.grid = tuple(grid)
        self.tensor_names = tuple(tensor_names)
        self.picks = tuple(picks)
        self.scalars = tuple(scalars)
        self.options = dict(options)
        self.keyword_tensors = dict(keyword_tensors or {})
        self._try_direct = direct and fast_launch_enabled()
        self.direct = None

    def __call__(self, tensors) -> None:
        direct = self.direct
        if direct is not None and not launch_hooks_installed():
            try:
                direct(tensors)
                return
            except Exception:  # another launcher convention: keep Triton's path from now on
                self.direct = None
        args = [tensors[i] for i in self.picks]
        args.extend(self.scalars)
        options = self.options
        if self.keyword_tensors:
            options = {**options, **{name: tensors[i] for name, i in self.keyword_tensors.items()}}
        compiled = self.kernel[self.grid](*args, **options)
        if self._try_direct:
            self._try_direct = False
            self.direct = _direct_launch(self.kernel, self.grid, args, options, compiled, self.picks,
                                         self.keyword_tensors)

    @property
    def is_direct(self) -> bool:
        """Whether later calls skip Triton's binding and go straight to the compiled launcher."""
        return self.direct is not None


def stream_source():
    """(get_current_stream, current device) as Triton's launch path reads them."""
    from triton.runtime import driver

    return driver.active.get_current_stream, driver.active.get_current_device()


def _record(kernel, grid, args, options, compiled):
    """The launcher call Triton makes for these arguments, recorded instead of launched; None if unsure."""
    run_attr = "_run" if isinstance(getattr(type(compiled), "run", None), property) else "run"
    getattr(compiled, "run")  # loads the module and creates the launcher if not yet done
    saved = compiled.__dict__.get(run_attr, _MISSING)
    if saved is _MISSING or not callable(saved):
        return None
    calls = []
    setattr(compiled, run_attr, lambda *call: calls.append(call))
    try:
        again = kernel[grid](*args, **options)
    finally:
        setattr(compiled, run_attr, saved)
    if again is not compiled or len(calls) != 1:
        return None
    return calls[0], saved


def _direct_launch(kernel, grid, args, options, compiled, picks, keyword_tensors=None):
    """A function replaying the recorded launcher call with new tensors, or None to keep Triton's path."""
    if compiled is None or launch_hooks_installed():
        return None
    try:
        recorded = _record(kernel, grid, args, options, compiled)
        if recorded is None:
            return None
        call, run = recorded
        g0, g1, g2, stream, function, packed, metadata, enter_hook, exit_hook, *kernel_args = call
        # With no hook active, the launch metadata and the (empty) hook chains are passed on
        # unread; they are replayed as recorded. An active hook sends every call Triton's way.
        if (g0, g1, g2) != tuple(grid) + (1,) * (3 - len(grid)) or _hook_active(enter_hook) \
                or _hook_active(exit_hook) or function is not getattr(compiled, "function", _MISSING):
            return None
        params = list(zip(kernel.arg_names, (p.is_constexpr for p in kernel.params)))
        values = dict(zip(kernel.arg_names, args))
        values.update((k, v) for k, v in options.items() if k in values or k in kernel.arg_names)
        if len(kernel_args) == len(params):
            order = [name for name, _ in params]
        elif len(kernel_args) == sum(1 for _, constexpr in params if not constexpr):
            order = [name for name, constexpr in params if not constexpr]
        else:
            return None
        tensor_slots = {kernel.arg_names[index]: pick for index, pick in enumerate(picks)}
        tensor_slots.update(keyword_tensors or {})
        slots = []
        for position, name in enumerate(order):
            if name not in values:
                return None
            if name in tensor_slots:  # a tensor parameter: replaced per call
                if kernel_args[position] is not values[name]:
                    return None
                slots.append((position, tensor_slots[name]))
            elif not (kernel_args[position] is values[name] or kernel_args[position] == values[name]):
                return None
        get_stream, device = stream_source()
        if get_stream(device) != stream:
            return None
    except Exception:
        return None
    template = list(kernel_args)

    def launch(tensors):
        call_args = template.copy()
        for position, index in slots:
            call_args[position] = tensors[index]
        run(g0, g1, g2, get_stream(device), function, packed, metadata, enter_hook, exit_hook, *call_args)

    return launch
