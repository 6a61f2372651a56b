# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the nccl role does on a machine, decided once from one ``gpu_guest_info`` read: the first rule the inputs
or the machine break, the NCCL packages to install, whether nccl-tests are to be built, and the role's result as
read.

NVIDIA's packages of NCCL (NCCL Installation Guide, docs.nvidia.com/deeplearning/nccl/install-guide, "Installing
NCCL": Ubuntu and RHEL/CentOS) are built per CUDA release and carry it in their version, ``<nccl>-<build>+cuda<X.Y>``
(``libnccl2_2.21.5-1+cuda12.4_amd64.deb``; the same naming in NVIDIA/gpu-operator and NVIDIA's CUDA repository
listings): ``libnccl2`` (``libnccl.so.2`` under ``/usr/lib/x86_64-linux-gnu``) and ``libnccl-dev`` (``nccl.h``
under ``/usr/include``) with apt, ``libnccl`` and ``libnccl-devel`` with dnf (the RPM names are the guide's; an
RPM file name of ``libnccl-2.21.5-1+cuda12.4.x86_64.rpm`` is not confirmed here from a recording). A build for
another CUDA major than the installed toolkit's is refused: CUDA's minor version compatibility holds within a major
release only.

nccl-tests (github.com/NVIDIA/nccl-tests, README "Build"): ``make`` with ``CUDA_HOME`` where CUDA is not in
/usr/local/cuda and ``NCCL_HOME`` where NCCL is not under /usr; ``MPI=0`` builds the single-process tests, which
run on the GPUs of one machine (``-g <GPUs>``). The programs land in ``build/`` (``all_reduce_perf`` and the other
``*_perf``); the role installs them into ``<prefix>/bin`` and records what they were built from in a stamp file,
whose SHA-1 (the read gives it) tells a converged machine without another round trip.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import json
import re

SOURCES = ("repository", "packages")
# Package names per package manager: the runtime, and the development files nccl-tests are built against.
PACKAGES = {"apt": ("libnccl2", "libnccl-dev"), "dnf": ("libnccl", "libnccl-devel")}
_VERSION = re.compile(r"^\d+\.\d+\.\d+-\d+$")
_CUDA = re.compile(r"^(\d+)\.(\d+)$")
# libnccl2_2.21.5-1+cuda12.4_amd64.deb, libnccl-dev_..., libnccl-2.21.5-1+cuda12.4.x86_64.rpm, libnccl-devel-...
_FILE = re.compile(r"^(libnccl2|libnccl-dev|libnccl|libnccl-devel)[_-](\d+\.\d+\.\d+-\d+)\+cuda(\d+\.\d+)"
                   r"(?:_(?:amd64|arm64)\.deb|\.(?:x86_64|aarch64)\.rpm)$")
_ARCHIVE = re.compile(r"\.(tar\.gz|tgz|tar\.xz|txz|tar\.bz2|tar)$")
NOTHING = " Nothing was changed."


def nccl_plan(guest, params, check_mode=False, hostname=""):
    """The plan for ``guest`` (``gpu_guest_info``'s ``gpu_guest``: probes os, pci, packages, nvidia_smi, cuda and the
    role's files) and ``params``: ``source``, ``version``, ``cuda_version``, ``package_files``, ``package_manager``,
    ``cuda_home``, ``tests``, ``tests_src``, ``tests_remote_src``, ``tests_archive_checksum`` (SHA-1 of a controller
    archive), ``prefix``, ``stamp_path``, ``make_options``, ``min_gpus``.

    Returns ``error`` (empty, or the first broken rule, ending "Nothing was changed."), ``converged``, ``pending``
    (in check mode, what waits for a toolkit the run has not installed yet),
    ``install`` (package specs or files, empty when the packages are as asked), ``manager``, ``build`` (whether
    nccl-tests are to be built), ``stamp`` (the stamp file's content), ``notes`` and ``result``.
    """
    name = hostname or "the machine"
    facts = _facts(guest, params)
    error = _first_error(guest, params, facts, name)
    # A check-mode run of a layer that installs the toolkit first finds none yet: what NCCL's build would be is not
    # known, so the plan says what waits instead of refusing.
    pending = ""
    if check_mode and error.startswith("%s: no CUDA toolkit at" % name):
        pending = ("%s: no CUDA toolkit at %s yet (check mode: a real run installs it first, then NCCL for it and "
                   "nccl-tests)." % (name, params["cuda_home"]))
        error = ""
        facts["tests_wanted"] = False
    install = [] if error or facts["packages_as_asked"] else facts["install"]
    if pending:
        install = []
    build = bool(not error and facts["tests_wanted"] and (install or not facts["tests_as_asked"]))
    notes = [pending] if pending else list(facts["notes"])
    return {
        "error": error + NOTHING if error else "",
        "converged": not error and not install and not build and not pending,
        "pending": pending,
        "install": install,
        "manager": facts["manager"],
        "build": build,
        "stamp": facts["stamp"],
        "notes": notes,
        "result": {
            "nccl_version": facts["wanted"] or None,
            "cuda_version": facts["cuda_version"] or None,
            "toolkit_version": facts["toolkit"].get("version"),
            "packages": dict((p, facts["installed"].get(p)) for p in facts["names"]) if facts["names"] else {},
            "tests": {"wanted": facts["tests_wanted"], "path": params["prefix"] + "/bin",
                      "all_reduce_perf": params["prefix"] + "/bin/all_reduce_perf",
                      "built": False, "note": facts["tests_note"] or None},
            "gpus": facts["gpus"],
            "notes": notes,
            "changed": bool(install or build or pending),
            "check_mode": bool(check_mode),
        },
    }


def stamp_text(archive, archive_checksum, nccl, cuda, cuda_home, make_options):
    """The stamp file's content: what the installed nccl-tests were built from (sorted JSON, one line)."""
    return json.dumps({"archive": archive, "archive_sha1": archive_checksum, "nccl": nccl, "cuda": cuda,
                       "cuda_home": cuda_home, "make": list(make_options)}, sort_keys=True) + "\n"


def _facts(guest, params):
    os_info = guest.get("os") or {}
    manager = params.get("package_manager") or (
        "dnf" if os_info.get("package_format") == "rpm" else "apt" if os_info.get("package_format") == "deb" else "")
    names = PACKAGES.get(manager, ())
    installed = dict((k, v) for k, v in (guest.get("packages") or {}).items() if k in names)
    files = guest.get("files") or {}
    toolkit = _toolkit(guest.get("cuda") or {}, params["cuda_home"])
    toolkit_series = ".".join((toolkit.get("version") or "").split(".")[:2])
    described = [_described(path) for path in params.get("package_files") or []]
    if params["source"] == "packages" and described and all(described):
        versions = sorted(set("%s+cuda%s" % (d[1], d[2]) for d in described))
        wanted = versions[0] if len(versions) == 1 else ""
        cuda_version = described[0][2] if len(versions) == 1 else ""
        # The runtime first: the development package depends on it at the same version.
        order = dict((n, i) for i, n in enumerate(PACKAGES.get(manager, ())))
        install = [path for _d, path in sorted(zip(described, params["package_files"]),
                                               key=lambda item: order.get(item[0][0], len(order)))]
    else:
        versions = []
        cuda_version = params.get("cuda_version") or toolkit_series
        wanted = "%s+cuda%s" % (params["version"], cuda_version) if params.get("version") and cuda_version else ""
        install = ["%s=%s" % (n, wanted) if manager == "apt" else "%s-%s" % (n, wanted) for n in names]
    packages_as_asked = bool(wanted and names and all(installed.get(n) == wanted for n in names))
    # The GPUs the driver sees (nvidia-smi), else those on the PCI bus.
    smi = guest.get("nvidia_smi") or {}
    gpus = len(smi.get("gpus") or []) if smi.get("present") else len((guest.get("pci") or {}).get("gpus") or [])
    tests_note = ""
    tests_wanted = bool(params.get("tests"))
    if tests_wanted and gpus < int(params.get("min_gpus") or 2):
        tests_wanted = False
        tests_note = ("%d GPU%s: nccl-tests measure NCCL across two or more GPUs, so they are not built here"
                      % (gpus, "" if gpus == 1 else "s"))
    elif not tests_wanted:
        tests_note = "nccl_tests is false"
    archive = params.get("tests_remote_src") or params.get("tests_src") or ""
    checksum = (files.get(params["tests_remote_src"]) or {}).get("checksum") if params.get("tests_remote_src") \
        else params.get("tests_archive_checksum") or None
    stamp = stamp_text(archive.rsplit("/", 1)[-1], checksum, wanted, toolkit.get("version"), params["cuda_home"],
                       params.get("make_options") or [])
    stamp_state = files.get(params["stamp_path"]) or {}
    program = files.get(params["prefix"] + "/bin/all_reduce_perf") or {}
    tests_as_asked = bool(stamp_state.get("checksum") == hashlib.sha1(stamp.encode()).hexdigest()
                          and program.get("exists") and program.get("type") == "file")
    return {
        "manager": manager, "names": names, "installed": installed, "files": files, "toolkit": toolkit,
        "toolkit_series": toolkit_series, "described": described, "versions": versions, "wanted": wanted,
        "cuda_version": cuda_version, "install": install, "packages_as_asked": packages_as_asked, "gpus": gpus,
        "tests_wanted": tests_wanted, "tests_note": tests_note, "archive": archive, "archive_checksum": checksum,
        "stamp": stamp, "tests_as_asked": tests_as_asked,
        "notes": ["%s: %s." % ("nccl-tests", tests_note)] if tests_note and params.get("tests") else [],
    }


def _toolkit(cuda, home):
    """The toolkit at ``home``: the /usr/local/cuda link's target, or a toolkit directory."""
    home = (home or "").rstrip("/")
    link = cuda.get("link") or {}
    target = link.get("target") if link.get("path") == home and link.get("target") else home
    if target and not target.startswith("/"):
        target = home.rsplit("/", 1)[0] + "/" + target
    return next((t for t in cuda.get("toolkits") or [] if t.get("path") == target.rstrip("/")), {})


def _described(path):
    match = _FILE.match((path or "").rsplit("/", 1)[-1])
    return match.groups() if match else None


def _first_error(guest, params, facts, name):
    errors = guest.get("errors") or {}
    unread = sorted(probe for probe in ("os", "pci", "packages", "cuda", "files") if errors.get(probe))
    if unread:
        return "%s: the read of %s failed (%s)." % (name, ", ".join(unread), errors[unread[0]].get("msg", ""))
    if params["source"] not in SOURCES:
        return "nccl_source %r is not one of %s." % (params["source"], ", ".join(SOURCES))
    if not facts["names"]:
        return ("%s: no package manager to install NCCL with (nccl_package_manager %r; the machine's package "
                "format is %s): set nccl_package_manager to apt or dnf."
                % (name, params.get("package_manager") or "", (guest.get("os") or {}).get("package_format")))
    if not facts["toolkit"].get("version"):
        return ("%s: no CUDA toolkit at %s (its version.json is missing): NCCL is pinned to a build for the installed "
                "CUDA, and nccl-tests are built with it; install the toolkit first (gpuops.vgpu.cuda_toolkit), set "
                "nccl_cuda_home, or leave NCCL out (nccl_install: false in the servers and passthrough layers)."
                % (name, params["cuda_home"]))
    error = _package_error(params, facts, name)
    if error:
        return error
    if facts["cuda_version"].split(".")[0] != facts["toolkit_series"].split(".")[0]:
        return ("%s: NCCL %s is built for CUDA %s, but the toolkit at %s is CUDA %s: use a build for CUDA %s.x "
                "(nccl_cuda_version, or the package files' +cuda<X.Y>)."
                % (name, facts["wanted"], facts["cuda_version"], params["cuda_home"], facts["toolkit"]["version"],
                   facts["toolkit_series"].split(".")[0]))
    if facts["tests_wanted"]:
        return _tests_error(params, facts, name)
    return ""


def _package_error(params, facts, name):
    if params["source"] == "repository":
        if not _VERSION.match(params.get("version") or ""):
            return ("nccl_version %r is not an NCCL package version without its CUDA part (such as 2.21.5-1, "
                    "for libnccl2 2.21.5-1+cuda12.4): set it." % (params.get("version") or "",))
        if not _CUDA.match(facts["cuda_version"]):
            return "nccl_cuda_version %r is not a CUDA release X.Y (such as 12.4)." % (facts["cuda_version"],)
        return ""
    files = params.get("package_files") or []
    if not files:
        return "nccl_source packages needs nccl_package_files (NVIDIA's libnccl2 and libnccl-dev package files)."
    unnamed = [path for path, d in zip(files, facts["described"]) if not d]
    if unnamed:
        return ("%s is not named like NVIDIA's NCCL packages (libnccl2_<version>+cuda<X.Y>_amd64.deb, "
                "libnccl-<version>+cuda<X.Y>.x86_64.rpm): give NVIDIA's files under their names." % unnamed[0])
    if len(facts["versions"]) != 1:
        return "nccl_package_files are of more than one version (%s): give one." % ", ".join(facts["versions"])
    given = set(d[0] for d in facts["described"])
    missing = [n for n in facts["names"] if n not in given]
    if missing:
        return ("nccl_package_files lack %s for %s: give the runtime and the development package (nccl.h, which "
                "nccl-tests are built against)." % (", ".join(missing), facts["manager"]))
    absent = [path for path in files if not (facts["files"].get(path) or {}).get("exists")]
    if absent:
        return "%s: the package file %s does not exist there: copy it onto the machine first." % (name, absent[0])
    return ""


def _tests_error(params, facts, name):
    given = [key for key in ("tests_src", "tests_remote_src") if params.get(key)]
    if len(given) != 1:
        return ("%s has %d GPUs, so nccl-tests are built there from NVIDIA's source archive, which needs exactly one "
                "of nccl_tests_src (on the controller) and nccl_tests_remote_src (on the machine); %s. No download "
                "happens at run time; set nccl_tests: false to leave nccl-tests out."
                % (name, facts["gpus"], (" and ".join("nccl_" + key for key in given) + " are set") if given
                   else "none is set"))
    if not _ARCHIVE.search(facts["archive"]):
        return ("The nccl-tests source %s is not a tar archive (.tar.gz, .tar.xz, .tar.bz2 or .tar, as GitHub's "
                "release archives are)." % facts["archive"])
    if params.get("tests_remote_src") and not (facts["files"].get(params["tests_remote_src"]) or {}).get("exists"):
        return ("%s: the nccl-tests archive %s does not exist there: copy it onto the machine or give it from the "
                "controller (nccl_tests_src)." % (name, params["tests_remote_src"]))
    if params.get("tests_src") and not params.get("tests_archive_checksum"):
        return "The nccl-tests archive %s does not exist on the controller." % params["tests_src"]
    return ""
