"""`simgpu run --arch gfx942,gfx1100,gfx942`: a program reads the KFD topology with plain file reads (the interposer
serves sysfs) and finds what amdkfd shows on such a machine: the two gfx942s in one XGMI hive with an XGMI io_link
(type 11, weight 15 for one hop, 16 lanes * 32 GT/s = 64000 MB/s) each way, the gfx1100 in none, reached by both
over PCIe p2p_links (type 2)."""

import json
import sys

from tests.support.clients import simgpu_run

READER = """
import json, os
T = "/sys/devices/virtual/kfd/kfd/topology/nodes"
def props(path):
    return {k: int(v) for k, v in (line.split() for line in open(path) if line.strip())}
def links(node, kind):
    d = f"{T}/{node}/{kind}"
    return [props(f"{d}/{e}/properties") for e in sorted(os.listdir(d), key=int)] if os.path.isdir(d) else []
print(json.dumps({n: {"props": props(f"{T}/{n}/properties"), "io": links(n, "io_links"), "p2p": links(n, "p2p_links")}
                  for n in sorted(os.listdir(T), key=int)}))
"""


def test_a_program_reads_the_hive_from_sysfs():
    r = simgpu_run([sys.executable, "-c", READER], "--devices", "3", "--arch", "gfx942,gfx1100,gfx942")
    assert r.returncode == 0, r.stderr[-2000:]
    t = json.loads(r.stdout)
    hive = [t[n]["props"]["hive_id"] for n in ("1", "2", "3")]
    assert hive[0] == hive[2] != 0 and hive[1] == 0
    for a, b in (("1", "3"), ("3", "1")):
        xgmi = [link for link in t[a]["io"] if link["type"] == 11]
        assert [(x["node_to"], x["weight"], x["min_bandwidth"], x["max_bandwidth"]) for x in xgmi] == \
            [(int(b), 15, 16 * 32 * 1000 // 8, 16 * 32 * 1000 // 8)]
        assert [(p["type"], p["node_to"]) for p in t[a]["p2p"]] == [(2, 2)]
    assert [(p["type"], p["node_to"]) for p in t["2"]["p2p"]] == [(2, 1), (2, 3)]
    assert [link["type"] for link in t["2"]["io"]] == [2]
