"""`python -m xal`: what xal-info prints -- the backends xal considered
(loaded or not, and why) and every device with its properties.

Exit status: 0; 1 when xal_init fails or a device cannot be read; 2 for bad
options, and when --backend was given and a backend did not load.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, TextIO

from . import _runtime, _xal
from ._device import KINDS, Device, capability_names
from ._errors import Error


def _bytes(n: int) -> str:
    units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"]
    v, u = float(n), 0
    while v >= 1024.0 and u < 5:
        v /= 1024.0
        u += 1
    return f"{n} B" if u == 0 else f"{v:.2f} {units[u]}"


def _abi(v: tuple[int, int]) -> str:
    return f"{v[0]}.{v[1]}"


def inventory() -> dict[str, Any]:
    """The backends and devices as xal-info --json gives them."""
    _runtime.ensure()
    out: dict[str, Any] = {"abi_version": _abi(_runtime.abi_version()), "backends": [],
                           "devices": []}
    for b in _runtime.backends():
        out["backends"].append({
            "name": b.name, "version": b.version, "path": b.path, "state": b.state,
            "status": b.status_name, "reason": b.reason,
            "abi_version": _abi(b.abi_version), "device_count": b.device_count,
            "simulated": b.simulated, "wrapper": b.wrapper,
            "driver_version": b.driver_version, "note": b.note,
        })
    for i in range(_xal.device_count()):
        out["devices"].append(_device_record(i))
    errors = _xal.partition_config_errors()
    out["partition_errors"] = [line for line in errors.split("\n") if line]
    return out


def _device_record(index: int) -> dict[str, Any]:
    try:
        dev = Device(_xal.device_get(index))
    except Error as e:
        return {"index": index, "error": str(e)}
    rec = dev.properties
    rec.pop("capabilities")
    rec["capabilities"] = capability_names(dev.capability_bits)
    rec["kind"] = KINDS.get(dev._p["kind"], "UNKNOWN")
    try:
        rec["compute_percent"] = dev.compute_share
    except Error:
        rec["compute_percent"] = 100
    try:
        free, total = dev.mem_info()
        rec["memory_free_bytes"], rec["memory_total_bytes"] = free, total
    except Error as e:
        rec["memory_free_bytes"] = rec["memory_total_bytes"] = None
        rec["memory_error"] = str(e)
    return rec


def _row(out: TextIO, key: str, value: Any) -> None:
    out.write(f"    {key:<22}{value}\n")


def render_text(inv: dict[str, Any], out: TextIO) -> None:
    out.write(f"xal ABI {inv['abi_version']}\n\nBackends: {len(inv['backends'])}\n")
    for i, b in enumerate(inv["backends"]):
        out.write(f"  [{i}] {b['name']}  {b['state']}\n")
        _row(out, "version", b["version"] or "-")
        _row(out, "path", b["path"] or "-")
        _row(out, "abi", "-" if b["abi_version"] == "0.0" else b["abi_version"])
        _row(out, "devices", b["device_count"])
        _row(out, "simulated", "yes" if b["simulated"] else "no")
        if b["wrapper"]:
            _row(out, "wrapper", "yes")
        _row(out, "driver version", b["driver_version"] or "-")
        if b["note"]:
            _row(out, "note", b["note"])
        if b["state"] != "LOADED" or b["reason"]:
            _row(out, "status", b["status"])
            _row(out, "reason", b["reason"] or "-")
    out.write(f"\nDevices: {len(inv['devices'])}\n")
    for d in inv["devices"]:
        if "error" in d:
            out.write(f"  [{d['index']}] cannot be read\n")
            _row(out, "error", d["error"])
            continue
        out.write(f"  [{d['index']}] {d['name']}\n")
        _row(out, "vendor", d["vendor"] or "-")
        _row(out, "backend", f"{d['backend']} #{d['backend_index']}")
        _row(out, "kind", d["kind"])
        _row(out, "uuid", d["uuid"])
        _row(out, "pci bus id", d["pci_bus_id"] or "-")
        _row(out, "memory", _bytes(d["memory_bytes"]))
        if d["memory_total_bytes"] is not None:
            _row(out, "memory free/total",
                 f"{_bytes(d['memory_free_bytes'])} / {_bytes(d['memory_total_bytes'])}")
        else:
            _row(out, "memory free/total", f"unknown ({d['memory_error']})")
        _row(out, "max allocation", _bytes(d["max_allocation_bytes"]))
        _row(out, "compute units", d["compute_units"])
        _row(out, "core clock", f"{d['core_clock_mhz']} MHz")
        _row(out, "memory clock", f"{d['memory_clock_mhz']} MHz")
        _row(out, "memory bus width", f"{d['memory_bus_width_bits']} bits")
        _row(out, "peak bandwidth", f"{d['peak_memory_bandwidth_gbps']:.1f} GB/s")
        _row(out, "capabilities", ", ".join(d["capabilities"]) or "none")
        _row(out, "parent", "-" if d["parent_index"] is None else d["parent_index"])
        if d["parent_index"] is not None or d["compute_percent"] != 100:
            _row(out, "compute share", f"{d['compute_percent']}%")
    if not inv["devices"]:
        out.write("  (none: see the backends' reasons above)\n")
    if inv["partition_errors"]:
        out.write(f"\nPartition problems (XAL_PARTITIONS): {len(inv['partition_errors'])}\n")
        for e in inv["partition_errors"]:
            out.write(f"  {e}\n")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m xal",
                                description="Lists xal's backends and devices (as xal-info).")
    p.add_argument("--json", action="store_true", help="print JSON for scripts")
    p.add_argument("--backend", help="load only this backend (as XAL_BACKENDS; e.g. fault:mock)")
    p.add_argument("--backend-path", help="extra plugin folders (as XAL_BACKEND_PATH)")
    p.add_argument("--selector", help="device selector, e.g. 'mock:0,1' (as XAL_DEVICE_SELECTOR)")
    p.add_argument("--version", action="version",
                   version=f"python -m xal, ABI {_abi(_runtime.abi_version())}")
    args = p.parse_args(argv)
    try:
        _runtime.init(args.backend, backend_path=args.backend_path,
                      device_selector=args.selector)
    except Error as e:
        print(f"python -m xal: xal_init failed: {e}", file=sys.stderr)
        return 1
    try:
        inv = inventory()
        if args.json:
            print(json.dumps(inv, indent=2))
        else:
            render_text(inv, sys.stdout)
        sys.stdout.flush()
    finally:
        _runtime.shutdown(force=True)
    if args.backend:
        for b in inv["backends"]:
            if b["state"] != "LOADED":
                print(f"python -m xal: backend '{b['name']}' is {b['state']}: "
                      f"{b['reason'] or 'no reason'}", file=sys.stderr)
                return 2
        if not inv["backends"]:
            print(f"python -m xal: no backend matched '{args.backend}'", file=sys.stderr)
            return 2
    bad = [d for d in inv["devices"] if "error" in d]
    for d in bad:
        print(f"python -m xal: device {d['index']} cannot be read: {d['error']}",
              file=sys.stderr)
    return 1 if bad else 0
