"""common/profiles.h, the device profiles of CUDA_LAB_PROFILE: every profile gives every attribute
of device.cuh's profile_attributes(), and every value names a published source (listed with an https
URL in the table) or says `unpublished` with a note on why that value was chosen. That device.cuh
applies every one of them (to DeviceInfo::prop and device_attribute()) is the unit test
profiles_applied (tests/unit/test_common.cpp, run by test_common.py)."""
import re

import pytest
from conftest import ROOT

PROFILES_H = ROOT / "common" / "profiles.h"
DEVICE_CUH = ROOT / "common" / "device.cuh"


def table():
    text = PROFILES_H.read_text()
    m = re.search(r'kTable = R"\((.*?)\)";', text, re.S)
    assert m, "profiles.h: no kTable raw string"
    sources, profiles = {}, {}
    for line in m.group(1).splitlines():
        f = line.split()
        if not f or f[0].startswith("#"):
            continue
        if f[0] == "source":
            sources[f[1]] = (f[2], " ".join(f[3:]))
        elif f[0] == "profile":
            profiles[f[1]] = {"_desc": line.split(None, 2)[2]}
        else:
            profiles[f[0]][f[1]] = (f[2], f[3], " ".join(f[4:]))
    return sources, profiles


def attributes():
    body = DEVICE_CUH.read_text().split("profile_attributes() {", 1)[1].split("};", 1)[0]
    return re.findall(r'"(\w+)"', body)


def test_every_profile_every_attribute_with_a_source():
    sources, profiles = table()
    attrs = attributes()
    assert len(attrs) >= 20
    assert set(profiles) == {"t4", "rtx3060-laptop-wsl", "rtx4090", "a100", "gtx1650"}
    for url, desc in sources.values():
        assert url.startswith("https://") and desc
    problems = []
    for name, p in profiles.items():
        assert "|" in p["_desc"], f"{name}: 'GPU | where' expected"
        for a in attrs:
            if a not in p:
                problems.append(f"{name} {a}: missing")
                continue
            value, src, note = p[a]
            if not value.isdigit():
                problems.append(f"{name} {a}: {value!r} is not a count")
            if src == "unpublished":
                if len(note) < 20:
                    problems.append(f"{name} {a}: unpublished without a note saying why this value")
            else:
                for s in src.split(","):
                    if s not in sources:
                        problems.append(f"{name} {a}: source {s!r} not listed")
        for a in set(p) - set(attrs) - {"_desc"}:
            problems.append(f"{name} {a}: not in device.cuh's profile_attributes()")
    assert not problems, "\n".join(problems)


def test_wsl_profile_cites_the_wsl_guide():
    """What WSL 2 lacks comes from NVIDIA's CUDA on WSL guide, cited beside the values."""
    sources, profiles = table()
    assert "wsl-user-guide" in sources["wsl"][0]
    wsl = profiles["rtx3060-laptop-wsl"]
    for a in ("concurrentManagedAccess", "pageableMemoryAccess"):
        value, src, _ = wsl[a]
        assert value == "0" and "wsl" in src.split(","), a


@pytest.mark.parametrize("name,arch", [("t4", 75), ("gtx1650", 75), ("rtx3060-laptop-wsl", 86), ("rtx4090", 89),
                                       ("a100", 80)])
def test_compute_capability(name, arch):
    _, profiles = table()
    p = profiles[name]
    assert int(p["major"][0]) * 10 + int(p["minor"][0]) == arch
