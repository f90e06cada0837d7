"""Fault control (xal_fault.h): scripts the fault backend from a test.

The fault backend must be loaded (XAL_BACKENDS=fault:mock, or
XAL_FAULT_PLAN); otherwise these raise BackendUnavailable. docs/FAULTS.md
describes the plans.
"""

from __future__ import annotations

import dataclasses

from . import _runtime, _xal


@dataclasses.dataclass(frozen=True)
class FaultRule:
    name: str
    operation: str  # the operation glob
    action: str  # "error", "delay", "hang", "bitflip", ...
    enabled: bool
    matched: int  # calls that matched operation and device
    fired: int  # injections made


@dataclasses.dataclass(frozen=True)
class FaultCounters:
    calls: int  # operations the fault backend saw
    injected: int  # faults injected, all rules


def load_plan(plan: str, *, append: bool = False) -> None:
    """Loads a plan: JSON text, a JSON file's path, or the compact XAL_FAULTS
    syntax ("mem_alloc=nth(1)OUT_OF_MEMORY"). A malformed plan changes
    nothing and raises InvalidArgument naming what is wrong."""
    _runtime.ensure()
    _xal.fault_load_plan(plan, append)


def clear() -> None:
    """Removes every rule (the counters stay)."""
    _runtime.ensure()
    _xal.fault_clear()


def set_rule_enabled(name: str, enabled: bool = True) -> None:
    _runtime.ensure()
    _xal.fault_set_rule_enabled(name, enabled)


def rules() -> list[FaultRule]:
    _runtime.ensure()
    return [FaultRule(**r) for r in _xal.fault_rules()]


def counters() -> FaultCounters:
    _runtime.ensure()
    calls, injected = _xal.fault_counters()
    return FaultCounters(calls, injected)
