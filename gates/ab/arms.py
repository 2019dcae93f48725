"""Arms of an A/B run: one declared variable, one value per arm, nothing else different."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]{0,39}$")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class ArmsError(ValueError):
    """The arms are not a fair comparison (or are malformed)."""


@dataclass(frozen=True)
class Variable:
    """What the arms vary: an environment variable (`kind="env"`) or a command-line option
    (`kind="arg"`, appended as `OPTION VALUE`)."""

    kind: str
    name: str

    def describe(self) -> dict:
        return {"kind": self.kind, "name": self.name}


@dataclass(frozen=True)
class Arm:
    name: str
    value: str

    def command(self, base_command: list[str], variable: Variable) -> list[str]:
        if variable.kind == "arg":
            return [*base_command, variable.name, self.value]
        return list(base_command)

    def environment(self, base_env: dict[str, str], variable: Variable) -> dict[str, str]:
        env = dict(base_env)
        if variable.kind == "env":
            env[variable.name] = self.value
        return env


def parse_variable(env_var: str | None, arg_option: str | None) -> Variable:
    if bool(env_var) == bool(arg_option):
        raise ArmsError("declare exactly one variable: --env-var NAME or --arg-option --OPTION")
    if env_var:
        if not _ENV_NAME.match(env_var):
            raise ArmsError(f"--env-var {env_var!r} is not an environment variable name")
        return Variable("env", env_var)
    if not arg_option.startswith("-") or any(c.isspace() for c in arg_option):
        raise ArmsError(f"--arg-option {arg_option!r} must be one option such as --split-kv")
    return Variable("arg", arg_option)


def parse_arms(specs: list[str]) -> list[Arm]:
    """`NAME=VALUE` per arm; at least two arms, distinct names and distinct values."""
    arms = []
    for spec in specs:
        name, sep, value = spec.partition("=")
        if not sep:
            raise ArmsError(f"--arm {spec!r}: expected NAME=VALUE")
        if not _NAME.match(name):
            raise ArmsError(f"--arm {spec!r}: the name must be lower-case letters, digits, '.', '_' or '-'")
        if any(ord(c) < 32 for c in value):
            raise ArmsError(f"--arm {spec!r}: the value holds a control character")
        arms.append(Arm(name, value))
    if len(arms) < 2:
        raise ArmsError(f"an A/B run needs at least two arms, got {len(arms)}")
    names = [arm.name for arm in arms]
    if len(set(names)) != len(names):
        raise ArmsError(f"arm names repeat: {names}")
    values = [arm.value for arm in arms]
    if len(set(values)) != len(values):
        raise ArmsError(f"two arms set {values} - the same value twice compares nothing")
    return arms


def check_fair(arms: list[Arm], variable: Variable, base_command: list[str], base_env: dict[str, str]) -> None:
    """Refuse arms that differ in anything but the declared variable.

    The command and environment every arm gets are built from one base; this check
    holds that construction to its promise, and refuses a base command that already
    sets the variable (a later value would be ambiguous).
    """
    if variable.kind == "arg" and variable.name in base_command:
        raise ArmsError(f"the command already passes {variable.name}; the harness adds it per arm")
    commands = [arm.command(base_command, variable) for arm in arms]
    envs = [arm.environment(base_env, variable) for arm in arms]
    for arm, command, env in zip(arms, commands, envs):
        extra_env = {k for k in set(env) ^ set(envs[0]) | {k for k in env if env[k] != envs[0].get(k)}}
        extra_env.discard(variable.name if variable.kind == "env" else "")
        if extra_env:
            raise ArmsError(f"arm {arm.name!r} differs from {arms[0].name!r} in the environment beyond "
                            f"{variable.name}: {sorted(extra_env)}")
        stripped = command[:len(base_command)]
        if stripped != commands[0][:len(base_command)]:
            raise ArmsError(f"arm {arm.name!r} runs another command than {arms[0].name!r}")


def inherited_environment(variable: Variable) -> dict[str, str]:
    """The harness's environment, with the declared variable removed (each arm sets it)."""
    env = dict(os.environ)
    if variable.kind == "env":
        env.pop(variable.name, None)
    env["PYTHONUNBUFFERED"] = "1"
    return env
