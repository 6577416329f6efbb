"""Drives a real `ferry emulator` through its whole control API with Python's standard library
alone, through the helper docs/emulator.md gives (ferry_emulator.py, extracted from the docs by
test/emulator/control-python.test.ts). Prints one `ok STEP` line per step; any failure raises.

    python3 control_api_check.py HELPER_DIR DATA_DIR   (FERRY_COMMAND: the command as a JSON list)
"""
import json
import os
import sys
import urllib.request
import uuid

sys.path.insert(0, sys.argv[1])
from ferry_emulator import Emulator  # noqa: E402

COMMAND = json.loads(os.environ["FERRY_COMMAND"])
DATA = sys.argv[2]


def ok(step):
    print("ok", step, flush=True)


def expect(condition, what):
    if not condition:
        raise AssertionError(what)


def project_names(emu, token):
    status, page = emu.request("GET", "/projects?pageSize=1000", token=token)
    expect(status == 200, f"GET /projects: {status} {page}")
    return sorted(p["name"] for p in page["items"])


def upload(emu, token, project, name, content):
    boundary = uuid.uuid4().hex
    body = (
        f"--{boundary}\r\ncontent-disposition: form-data; name=\"file\"; filename=\"{name}\"\r\n"
        f"content-type: text/plain\r\n\r\n"
    ).encode() + content + f"\r\n--{boundary}--\r\n".encode()
    upload_id = str(uuid.uuid4())
    status, doc = emu.request(
        "POST", f"/projects/{project}/documents?documentUploadIdentifier={upload_id}", token=token,
        form=(body, f"multipart/form-data; boundary={boundary}"),
    )
    expect(status == 200, f"upload: {status} {doc}")
    return upload_id


def documents_of(emu, token, project, upload_id):
    status, page = emu.request("GET", f"/projects/{project}/documents?flattenList=true&uploadObjectIdentifier={upload_id}", token=token)
    expect(status == 200, f"documents: {status} {page}")
    return page["items"]


emu = Emulator(COMMAND, "--data", DATA)
try:
    with urllib.request.urlopen(emu.url + "/_emulator/health") as res:
        expect(res.status == 200 and json.load(res) == {"status": "ready"}, "health")
    ok("health")

    status, _ = emu.request("GET", "/_emulator/traffic", token="not-the-admin-token")
    expect(status == 401, f"a wrong token: {status}")
    tenant = emu.token()
    status, problem = emu.request("GET", "/_emulator/traffic", token=tenant)
    expect(status == 403, f"a tenant's token: {status}")
    status, _ = emu.request("GET", "/projects")  # the admin token on a service route
    expect(status == 401, f"the admin token on /projects: {status}")
    ok("401 and 403")

    seeded = project_names(emu, tenant)
    emu.control("POST", "snapshots", {"name": "seeded"})
    status, made = emu.request("POST", "/projects", {"name": "made after the snapshot", "description": None}, token=tenant)
    expect(status == 200, f"create a project: {status} {made}")
    expect("made after the snapshot" in project_names(emu, tenant), "the new project is listed")
    emu.control("POST", "snapshots/seeded/restore")
    expect(project_names(emu, tenant) == seeded, "the restored state has the seed's projects")
    status, _ = emu.request("GET", f"/projects/{made['objectIdentifier']}", token=tenant)
    expect(status == 404, f"the project made after the snapshot: {status}")
    status, _ = emu.request("POST", "/_emulator/snapshots/no-such-snapshot/restore")
    expect(status == 404, f"an unknown snapshot: {status}")
    ok("snapshot and restore")

    emu.control("PUT", "faults", {"spec": "503=1"})
    status, _ = emu.request("GET", "/projects", token=tenant)
    expect(status == 503, f"with 503=1: {status}")
    status, problem = emu.request("PUT", "/_emulator/faults", {"spec": "503=1,sometimes"})
    expect(status == 400 and "sometimes" in problem["detail"], f"a spec that does not parse: {status} {problem}")
    emu.control("DELETE", "faults")
    status, _ = emu.request("GET", "/projects", token=tenant)
    expect(status == 200, f"faults cleared: {status}")
    ok("faults")

    status, _ = emu.request("PUT", "/_emulator/listing-lag", {"ms": -5})
    expect(status == 400, f"a negative lag: {status}")
    emu.control("PUT", "listing-lag", {"ms": 600000})
    status, late = emu.request("POST", "/projects", {"name": "listed late", "description": None}, token=tenant)
    expect(status == 200, f"create: {status}")
    expect("listed late" not in project_names(emu, tenant), "a new project hidden by the lag")
    emu.control("POST", "clock/advance", {"ms": 600001})
    expect("listed late" in project_names(emu, tenant), "listed once its lag has passed")
    emu.control("PUT", "listing-lag", {"ms": 0})
    ok("listing lag")

    project = emu.ready["tenants"][0]["assistants"][0]["projectIdentifier"]
    emu.control("PUT", "processing", {"minDelayMs": 3600000, "maxDelayMs": 3600000})
    upload_id = upload(emu, tenant, project, "drained.txt", b"processed by drain")
    expect([d["uploadInProgress"] for d in documents_of(emu, tenant, project, upload_id)] == [True], "pending before the drain")
    drained = emu.control("POST", "processing/drain")
    expect(drained["processed"] >= 1, f"drain: {drained}")
    docs = documents_of(emu, tenant, project, upload_id)
    expect([(d["uploadInProgress"], d["uploadSuccessful"]) for d in docs] == [(False, True)], f"processed by the drain: {docs}")
    ok("processing/drain")

    status, _ = emu.request("POST", "/_emulator/clock/advance", {"ms": -1})
    expect(status == 400, f"a step back: {status}")
    emu.control("POST", "clock/advance", {"ms": 3601000})
    status, _ = emu.request("GET", "/projects", token=tenant)
    expect(status == 401, f"a token past its life: {status}")
    tenant = emu.token()
    ok("clock")

    emu.control("POST", "reset")
    expect(project_names(emu, tenant) == seeded, "reset to the seed")
    expect(emu.control("GET", "processing") != {"minDelayMs": 3600000, "maxDelayMs": 3600000}, "reset puts the start's delays back")
    ok("reset")

    emu.control("POST", "snapshots", {"name": "kept"})
finally:
    emu.stop()

emu = Emulator(COMMAND, "--data", DATA)
try:
    names = [s["name"] for s in emu.control("GET", "snapshots")["snapshots"]]
    expect(names == ["kept", "seeded"], f"snapshots after a restart: {names}")
    ok("snapshots after a restart")
finally:
    emu.stop()
