"""Re-checks the committed golden vectors (and optional extra receipts) with the independent
Python reference ../shared/tools/svcref.py. Prints one JSON line: {"checked": N, "failures": [...]}.
Usage: python3 svcref_check.py <svcref_dir> <vectors_dir> [receipt.json ...]
"""
import json
import os
import sys

sys.path.insert(0, sys.argv[1])
import svcref as R  # noqa: E402

vec = sys.argv[2]
failures = []
checked = 0


def load(p):
    with open(os.path.join(vec, p)) as f:
        return json.load(f)


def check(cond, what):
    global checked
    checked += 1
    if not cond:
        failures.append(what)


for c in load("cell64/generated.json")["cases"]:
    check(R.cell(c["lat"], c["lng"]) == c["cell"], "cell64 %s,%s" % (c["lat"], c["lng"]))
    lat, lng = R.cell_center(c["cell"])
    check(abs(lat - c["center"]["lat"]) < 1e-12 and abs(lng - c["center"]["lng"]) < 1e-12, "centre " + c["cell"])

for c in load("facts/cids.json")["cases"]:
    b = R.cbor(c["body"])
    check(b.hex() == c["cbor_hex"], "cbor " + c["fact_cid"])
    check(R.b32(R.blake3(b)) == c["fact_cid"], "fact_cid " + c["fact_cid"])

for c in load("blake3/official.json")["cases"]:
    data = bytes(i % 251 for i in range(c["input_len"]))
    check(R.blake3(data).hex() == c["hash"], "blake3 len %d" % c["input_len"])

rec = load("receipts/receipts.json")
pub = R.unb32(rec["public_key"])
for c in rec["cases"]:
    r = c["receipt"]
    d = R.receipt_digest(r)
    check(d.hex() == c["digest_hex"], "receipt digest " + c["name"])
    try:
        check(R.ed25519_ok(pub, R.unb32(r["signature"]), d), "receipt signature " + c["name"])
    except ImportError:
        pass

for c in load("merkle/batch.json")["cases"]:
    leaves = [R.unb32(x) for x in c["leaves"]]
    check(R.batch_root(leaves).hex() == c["root_hex"], "batch root n=%d" % len(leaves))
    srt = sorted(leaves)
    for leaf, p in zip(leaves, c["proofs"]):
        sib = [R.unb32(s) for s in p["siblings"]]
        check(R.batch_root_from_proof(leaf, p["index"], sib).hex() == c["root_hex"], "batch proof")
        check(srt[p["index"]] == leaf, "batch proof index")

tree = load("rfc6962/tree.json")
entries = [("entry %d" % i).encode() for i in range(64)]
for s in tree["sizes"]:
    n = s["size"]
    check(R.mth(entries[:n]).hex() == s["root"], "mth %d" % n)
    for inc in s["inclusion"]:
        path = [bytes.fromhex(x) for x in inc["path"]]
        check(R.verify_inclusion(inc["index"], n, R.blake3(b"\0" + entries[inc["index"]]), path, bytes.fromhex(s["root"])),
              "inclusion %d/%d" % (inc["index"], n))
    for con in s["consistency"]:
        path = [bytes.fromhex(x) for x in con["path"]]
        check(R.verify_consistency(con["first"], n, bytes.fromhex(con["first_root"]), bytes.fromhex(s["root"]), path),
              "consistency %d/%d" % (con["first"], n))

sth = load("tree-heads/sth.json")
for c in sth["cases"]:
    d = R.sth_digest(c["tree_size"], bytes.fromhex(c["root_hex"]), c["signed_at"], R.unb32(c["responder"]))
    check(d.hex() == c["sth_digest_hex"], "sth %d" % c["tree_size"])
a = sth["attester"]
check(R.attester_digest(bytes(a["batch_root"]), a["registry_cid"], a["schema_cid"]).hex() == a["digest_hex"], "attester digest")

# Extra receipts (e.g. served by a running responder): digest + signature under their own key.
for path in sys.argv[3:]:
    with open(path) as f:
        r = json.load(f)
    d = R.receipt_digest(r)
    try:
        check(R.ed25519_ok(R.unb32(r["responder_pubkey_b32"]), R.unb32(r["signature"]), d), "extra receipt " + path)
    except ImportError:
        failures.append("python 'cryptography' missing: cannot check the signature of " + path)

print(json.dumps({"checked": checked, "failures": failures}))
