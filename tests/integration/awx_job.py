# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A job of extensions/awx/definitions.yml run the way AWX runs it: a private data directory laid out as AWX writes
one, then ansible-runner inside the execution environment.

The layout follows AWX's job runner (awx/main/tasks/jobs.py: BaseTask.run, build_inventory,
_write_extra_vars_file; awx/main/models/credential/__init__.py: CredentialType.inject_credential) and
ansible-runner's input directory (docs "Runner Input Directory Hierarchy"):

- ``project/``: the project's checkout; the playbook path is relative to it.
- ``inventory/hosts``: an executable script that prints the inventory as JSON (``_meta.hostvars`` included).
- ``env/extravars``: AWX's meta variables, the job template's extra vars and the survey answers; every value that
  does not come from the job template is tagged ``!unsafe``.
- ``env/tmp*``: each credential's injected extra vars (passed as ``-e @/runner/env/tmp*`` in ``env/cmdline``) and
  injected files; AWX renders injector templates in a sandboxed Jinja environment, secrets included.
- ``env/envvars``, ``env/passwords`` (the expect map of password prompts), ``env/settings`` (job timeout, AWX's
  suppressed output): what AWX hands runner as ``envvars``, ``passwords`` and ``settings``.

AWX starts the EE itself (receptor) with the private data directory at /runner; ansible-runner's
``--process-isolation --container-image`` does the same here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import shutil
import stat
import subprocess
import tempfile

import jinja2
import jinja2.sandbox
import yaml

from ee_image import podman_env, tool
from site_run import ROOT

DEFINITIONS = os.path.join(ROOT, "extensions", "awx", "definitions.yml")
CONTAINER_ROOT = "/runner"
# The user the execution environment runs as (ansible-builder's options.user), who owns the private data directory
# as AWX's user owns it on an execution node.
RUNNER_UID = 1000
PROJECT_IGNORE = shutil.ignore_patterns(".git", ".tmp", ".venv", ".build", "__pycache__", "output", "*.tar.gz")
# AWX's answers to password prompts, with no Machine or Vault credential: every prompt gets an empty answer.
PASSWORD_PROMPTS = [r"Enter passphrase for .*:\s*?$", r"Bad passphrase, try again for .*:\s*?$",
                    r"sudo password.*:\s*?$", r"SSH password:\s*?$", r"Password:\s*?$", r"Vault password:\s*?$"]


class Unsafe(str):
    """A value tagged !unsafe: a template AWX or the job renders, or a value Ansible must not render."""


class _Loader(yaml.SafeLoader):
    pass


class _Dumper(yaml.SafeDumper):
    pass


_Loader.add_constructor("!unsafe", lambda loader, node: Unsafe(loader.construct_scalar(node)))
_Dumper.add_representer(Unsafe, lambda dumper, value: dumper.represent_scalar("!unsafe", str(value)))


def definitions(state_dir):
    """extensions/awx/definitions.yml with what apply.yml renders rendered (gpuops_awx_state_dir: ``state_dir``)."""
    with open(DEFINITIONS) as handle:
        data = yaml.load(handle, Loader=_Loader)
    context = {"gpuops_awx_state_dir": str(state_dir), "gpuops_awx_organization": "Default"}

    def render(node):
        if isinstance(node, dict):
            return dict((key, render(value)) for key, value in node.items())
        if isinstance(node, list):
            return [render(value) for value in node]
        if isinstance(node, Unsafe) or not isinstance(node, str):
            return node
        return jinja2.Template(node, undefined=jinja2.StrictUndefined).render(context)
    return render(data)


def job_template(defs, name):
    return next(template for template in defs["gpuops_awx_job_templates"] if template["name"] == name)


def template_extra_vars(defs, template):
    """The job template's extra vars, as apply.yml sets them."""
    variables = dict(defs["gpuops_awx_state_vars"])
    variables.update(defs["gpuops_awx_lock_vars"].get(template.get("lock"), {}))
    return variables


def _write(path, text, mode):
    with open(path, "w") as handle:
        handle.write(text)
    os.chmod(path, mode)


def inject(credential_type, inputs, private_data_dir, args):
    """One credential: its files and extra vars in env/ (as AWX's inject_credential writes them)."""
    sandbox = jinja2.sandbox.ImmutableSandboxedEnvironment()
    namespace = dict(inputs)
    for field in credential_type["inputs"]["fields"]:
        if field["type"] == "boolean":
            namespace.setdefault(field["id"], False)
    injectors = credential_type["injectors"]
    for label, template in (injectors.get("file") or {}).items():
        handle, path = tempfile.mkstemp(dir=os.path.join(private_data_dir, "env"))
        with os.fdopen(handle, "w") as out:
            out.write(sandbox.from_string(template).render(**namespace))
        os.chmod(path, stat.S_IRUSR | stat.S_IWUSR)
        container_path = CONTAINER_ROOT + path[len(private_data_dir):]
        if "." in label:
            namespace.setdefault("tower", {"filename": {}})["filename"][label.split(".", 1)[1]] = container_path
        else:
            namespace["tower"] = {"filename": container_path}
    env = dict((name, sandbox.from_string(template).render(**namespace))
               for name, template in (injectors.get("env") or {}).items())
    extra_vars = dict((name, sandbox.from_string(template).render(**namespace))
                      for name, template in (injectors.get("extra_vars") or {}).items())
    if extra_vars:
        handle, path = tempfile.mkstemp(dir=os.path.join(private_data_dir, "env"))
        with os.fdopen(handle, "w") as out:
            out.write(yaml.dump(dict((k, Unsafe(v)) for k, v in extra_vars.items()), Dumper=_Dumper))
        os.chmod(path, stat.S_IRUSR)
        args.extend(["-e", "@" + CONTAINER_ROOT + path[len(private_data_dir):]])
    return env


def write_private_data_dir(path, defs, template, job_id, inventory, credentials, survey, workflow_job_id=None):
    """The private data directory of one job of ``template``. ``inventory``: the inventory as script data;
    ``credentials``: credential type name -> inputs; ``survey``: the survey's answers."""
    path = str(path)
    shutil.copytree(ROOT, os.path.join(path, "project"), ignore=PROJECT_IGNORE, symlinks=True)
    for folder in ("env", "inventory"):
        os.makedirs(os.path.join(path, folder), mode=0o700)
    _write(os.path.join(path, "inventory", "hosts"), "#! /usr/bin/env python3\n# -*- coding: utf-8 -*-\nprint(%r)\n"
           % json.dumps(inventory), stat.S_IRUSR | stat.S_IXUSR | stat.S_IWUSR)

    meta = {"awx_job_id": job_id, "awx_job_template_name": template["name"], "awx_job_launch_type": "manual",
            "awx_user_name": "admin", "awx_project_revision": "0" * 40}
    if workflow_job_id is not None:
        meta.update(awx_workflow_job_id=workflow_job_id, awx_workflow_job_name=defs["gpuops_awx_workflow"]["name"])
    extra_vars = dict((key, Unsafe(value) if isinstance(value, str) else value)
                      for key, value in dict(meta, **survey).items())
    # The job template's own extra vars are the ones AWX lets Jinja render.
    extra_vars.update((key, str(value)) for key, value in template_extra_vars(defs, template).items())
    _write(os.path.join(path, "env", "extravars"), yaml.dump(extra_vars, Dumper=_Dumper), stat.S_IRUSR)

    args, env = [], {"JOB_ID": str(job_id), "AWX_HOST": "https://awx.example.com", "ANSIBLE_RETRY_FILES_ENABLED":
                     "False", "ANSIBLE_NOCOLOR": "1", "PROJECT_REVISION": "0" * 40,
                     "AWX_PRIVATE_DATA_DIR": CONTAINER_ROOT}
    types = dict((kind["name"], kind) for kind in defs["gpuops_awx_credential_types"])
    for name in template["credentials"]:
        env.update(inject(types[name], credentials[name], path, args))
    _write(os.path.join(path, "env", "cmdline"), " ".join(args), stat.S_IRUSR)
    _write(os.path.join(path, "env", "envvars"), yaml.safe_dump(env), stat.S_IRUSR)
    _write(os.path.join(path, "env", "passwords"), yaml.safe_dump(dict((p, "") for p in PASSWORD_PROMPTS)),
           stat.S_IRUSR)
    _write(os.path.join(path, "env", "settings"), yaml.safe_dump(
        {"job_timeout": 0, "suppress_ansible_output": True, "suppress_output_file": True}), stat.S_IRUSR)
    return path


def script_inventory(inventories, drop=()):
    """The inventory as AWX's inventory script prints it, from Ansible inventory files; ``drop``: variables a
    credential carries instead."""
    proc = subprocess.run([tool("ansible-inventory"), "--list"] + [arg for path in inventories for arg in ("-i", path)],
                          cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                          check=True, timeout=120)
    data = json.loads(proc.stdout)
    for group in data.values():
        for name in drop:
            if isinstance(group, dict):
                (group.get("vars") or {}).pop(name, None)
    for host_vars in data["_meta"]["hostvars"].values():
        for name in drop:
            host_vars.pop(name, None)
    return data


def give_to_runner(*folders):
    for folder in folders:
        os.chown(folder, RUNNER_UID, 0)
        for base, dirs, names in os.walk(folder):
            for name in dirs + names:
                os.lchown(os.path.join(base, name), RUNNER_UID, 0)


def run_job(private_data_dir, template, job_id, image, mounts=()):
    """ansible-runner on the private data directory inside ``image``, on the host network (``mounts``: folders
    exposed to the job at the same path); the completed process."""
    # runner (root here) would make the artifacts folder its own; on an execution node the job's user owns it.
    os.makedirs(os.path.join(private_data_dir, "artifacts", str(job_id), "job_events"), mode=0o700)
    give_to_runner(private_data_dir, *mounts)
    argv = [tool("ansible-runner"), "run", private_data_dir, "-p", template["playbook"], "--ident", str(job_id),
            "--process-isolation", "--process-isolation-executable", "podman", "--container-image", image,
            "--container-option=--net=host"]
    for mount in mounts:
        argv.extend(["--container-volume-mount", "%s:%s" % (mount, mount)])
    return subprocess.run(argv, env=podman_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, check=False, timeout=1200)


def artifacts(private_data_dir, job_id):
    """status, rc and the job events runner wrote, in their order."""
    folder = os.path.join(private_data_dir, "artifacts", str(job_id))
    with open(os.path.join(folder, "status")) as handle:
        status = handle.read().strip()
    with open(os.path.join(folder, "rc")) as handle:
        rc = int(handle.read().strip())
    events = []
    for name in sorted(os.listdir(os.path.join(folder, "job_events")), key=lambda name: int(name.split("-")[0])):
        with open(os.path.join(folder, "job_events", name)) as handle:
            events.append(json.load(handle))
    return status, rc, events


def files_holding(folder, secrets):
    """Files under ``folder`` that hold any of ``secrets``."""
    found = []
    for base, _dirs, names in os.walk(folder):
        for name in names:
            with open(os.path.join(base, name), "rb") as handle:
                data = handle.read()
            found.extend("%s: %s..." % (os.path.join(base, name), secret[:3]) for secret in secrets
                         if secret.encode() in data)
    return found
