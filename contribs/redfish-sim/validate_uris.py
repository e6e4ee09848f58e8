#!/usr/bin/env python3
"""Run the DMTF Redfish Service Validator on a list of resources, in one
process, and print its counts as JSON.

    validate_uris.py --rhost http://127.0.0.1:PORT --user U --password P \\
        --authtype Session|Basic|None --schema-dir ../shared/redfish/csdl \\
        URI [URI ...]

`rf_service_validator --payload Single URI` checks one resource per run and
spends about a second parsing the schemas each time; `--payload Tree` walks
far more than a meter reads (30 s for public-rackmount1).  This drives the
same library (PyPI redfish-service-validator, the version pinned in
contribs/test-all.sh): the schemas are parsed once (offline: only
SCHEMA_DIR is read, as with --skipschema), then each URI is validated as
`--payload Single` does.  Output, one JSON object on stdout:

    {"total": {"pass": N, "warn": N, "fail": N, "skip": N},
     "resources": {URI: {"status": HTTP, "pass": .., "warn": .., "fail": ..,
                         "skip": .., "fails": ["message", ...]}}}

Exit status 0 once every URI was tried (failures are in the JSON), 2 when
the service could not be reached at all.
"""
import argparse
import json
import logging
import os
import shutil
import sys
import tempfile


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rhost", required=True)
    p.add_argument("--user", default="")
    p.add_argument("--password", default="")
    p.add_argument("--authtype", default="Session",
                   choices=("Session", "Basic", "None"))
    p.add_argument("--schema-dir", required=True)
    p.add_argument("--timeout", type=int, default=10)
    p.add_argument("--log-dir", help="keep the validator's debug log here "
                   "(default: a temporary folder, removed at the end)")
    p.add_argument("uris", nargs="+")
    args = p.parse_args()

    logdir = args.log_dir or tempfile.mkdtemp(prefix="rf-validate-")
    try:
        return validate(args, logdir)
    finally:
        if not args.log_dir:
            shutil.rmtree(logdir, ignore_errors=True)


def validate(args, logdir):
    import redfish
    from redfish_service_validator import logger, metadata
    from redfish_service_validator.system_under_test import SystemUnderTest

    os.makedirs(logdir, exist_ok=True)
    logger.logger = redfish.redfish_logger(
        os.path.join(logdir, "validator.log"),
        "%(asctime)s - %(levelname)s - %(message)s", logging.INFO)
    quiet = open(os.devnull, "w")
    real_stdout, sys.stdout = sys.stdout, quiet    # its per-URI prints
    try:
        # without credentials the client sends none (sushy-static: no auth)
        sut = SystemUnderTest(args.rhost, args.user, args.password,
                              args.timeout,
                              "basic" if args.authtype == "None"
                              else args.authtype,
                              None, None, None, [], False)
    except Exception as e:
        sys.stdout = real_stdout
        print("validate_uris: cannot reach %s: %s" % (args.rhost, e),
              file=sys.stderr)
        return 2
    metadata.parse_schema_files(args.schema_dir)
    out = {"total": {}, "resources": {}}
    for uri in args.uris:
        sut.validate("Single", uri, uri)
        res = sut.get_resource(uri)
        fails = ["%s: %s" % (prop or "(resource)", r["Message"])
                 for prop, r in res["Results"].items()
                 if r["Result"] == "FAIL"]
        out["resources"][uri] = {
            "status": res["StatusCode"], "pass": res["Pass"],
            "warn": res["Warn"], "fail": res["Fail"], "skip": res["Skip"],
            "fails": fails}
    try:
        sut.logout()
    except Exception:
        pass
    sys.stdout = real_stdout
    for key in ("pass", "warn", "fail", "skip"):
        out["total"][key] = sum(r[key] for r in out["resources"].values())
    json.dump(out, sys.stdout, indent=1, sort_keys=True)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
