# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collection's one pyVmomi client.

Reads go through the PropertyCollector with explicit property paths, many objects per call; tasks are awaited
together with WaitForUpdatesEx. Every failure is raised as a typed error from ``_errors``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import http.client as http_client
import socket
import ssl
import time
import traceback

from ansible_collections.gpuops.vgpu.plugins.module_utils.clients import _retry
from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import (
    ApiError,
    ConnectionFailure,
    GpuopsError,
    MissingLibrary,
    NotFound,
    TimeoutExpired,
)

PYVMOMI_IMPORT_ERROR = None
try:
    from pyVim.connect import Disconnect, SmartConnect
    from pyVmomi import vim, vmodl
except ImportError:  # pragma: no cover - raised as MissingLibrary by VCenterClient.from_params()
    PYVMOMI_IMPORT_ERROR = traceback.format_exc()
    vim = vmodl = None


def fault_message(fault):
    """The human part of a vSphere fault: its localized message, else its type name."""
    msg = getattr(fault, "msg", None) or getattr(fault, "localizedMessage", None)
    if not msg and getattr(fault, "faultMessage", None):
        msg = "; ".join(m.message for m in fault.faultMessage if getattr(m, "message", None))
    return msg or type(fault).__name__.split(".")[-1]


def method_name(method):
    """The vSphere API name of a bound pyVmomi method (``ReconfigVM_Task``), else the callable's name."""
    for cell in getattr(method, "__closure__", None) or ():
        info = getattr(cell.cell_contents, "info", None)
        if getattr(info, "wsdlName", None):
            return info.wsdlName
    return getattr(method, "__name__", "call")


def fault_name(fault):
    return type(fault).__name__.split(".")[-1]


def _spec_type(obj, found):
    """The requested type ``obj`` belongs to: its exact type if requested (a cluster is also a ComputeResource)."""
    if type(obj) in found:
        return type(obj)
    return next(obj_type for obj_type in found if isinstance(obj, obj_type))


class VCenterClient:
    """A logged-in vCenter session. Use as a context manager, or call ``close()``."""

    def __init__(self, hostname, username, password, port=443, validate_certs=True):
        if PYVMOMI_IMPORT_ERROR:
            raise MissingLibrary("pyvmomi", PYVMOMI_IMPORT_ERROR)
        self.endpoint = "%s:%s" % (hostname, port)
        self.retried = 0
        self.si = self._connect(hostname, username, password, port, validate_certs)
        self.content = self.call(self.si.RetrieveContent)

    @classmethod
    def from_params(cls, params):
        """A session from the ``vcenter_connection`` options; the caller closes it."""
        return cls(params["hostname"], params["username"], params["password"], port=params["port"],
                   validate_certs=params["validate_certs"])

    def _connect(self, hostname, username, password, port, validate_certs):
        """Log in; a connection lost or a 503 on the way is tried again with backoff (a second login is harmless)."""
        for attempt in range(_retry.ATTEMPTS):
            try:
                return self._login(hostname, username, password, port, validate_certs)
            except ConnectionFailure as err:
                if not err.details.get("transient") or attempt + 1 >= _retry.ATTEMPTS:
                    raise
                self.retried += 1
                time.sleep(_retry.delay(attempt))

    def _login(self, hostname, username, password, port, validate_certs):
        try:
            # pyVmomi skips verification for localhost unless it is handed a context: always hand it one.
            context = ssl.create_default_context() if validate_certs else ssl._create_unverified_context()
            return SmartConnect(host=hostname, user=username, pwd=password, port=port, sslContext=context,
                                disableSslCertValidation=not validate_certs, connectionPoolTimeout=-1)
        except vim.fault.InvalidLogin:
            raise ConnectionFailure(
                "vCenter %s refused the login of user '%s'." % (self.endpoint, username),
                hint="Check username and password (or VMWARE_USER / VMWARE_PASSWORD).")
        except ssl.SSLCertVerificationError as err:
            raise ConnectionFailure(
                "The TLS certificate of vCenter %s could not be verified: %s." % (self.endpoint, err.verify_message),
                hint="Trust its CA (SSL_CERT_FILE / REQUESTS_CA_BUNDLE) or, in a lab only, set validate_certs: false.")
        except (socket.error, ssl.SSLError, http_client.HTTPException) as err:
            raise ConnectionFailure(
                "Could not reach vCenter %s: %s." % (self.endpoint, err),
                hint="Check hostname and port, and that the vCenter answers HTTPS from this controller.",
                transient=not isinstance(err, ConnectionRefusedError))
        except vim.fault.HostConnectFault as err:
            # pyVmomi wraps what went wrong on the wire while reading the service content (a 503 from the proxy, a
            # reset): as a login, safe to try again, unless nothing listens there.
            message = fault_message(err)
            raise ConnectionFailure("Could not reach vCenter %s: %s." % (self.endpoint, message),
                                    hint="Check hostname and port, and that the vCenter answers HTTPS from this "
                                         "controller.", transient="refused" not in message.lower())
        except vmodl.MethodFault as err:
            raise ConnectionFailure("vCenter %s rejected the connection: %s." % (self.endpoint, fault_message(err)))

    def close(self):
        if self.si is not None:
            try:
                Disconnect(self.si)
            except Exception:  # noqa: BLE001 - logging out is best effort
                pass
            self.si = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # ---- reads ------------------------------------------------------------------------------------------------

    def retrieve(self, specs, root=None):
        """Read properties of all objects of several types under ``root`` in one RetrievePropertiesEx.

        ``specs`` maps a vim type (e.g. ``vim.HostSystem``) to the property paths to read. Returns a dict
        mapping each type to a list of dicts holding ``obj``, ``moid`` and the properties (missing ones absent).
        """
        view = self.call(self.content.viewManager.CreateContainerView,
                         container=root or self.content.rootFolder, type=list(specs), recursive=True)
        try:
            traversal = vmodl.query.PropertyCollector.TraversalSpec(
                name="view", path="view", skip=False, type=vim.view.ContainerView)
            obj_spec = vmodl.query.PropertyCollector.ObjectSpec(obj=view, skip=True, selectSet=[traversal])
            return self._collect([obj_spec], specs)
        finally:
            self.clean_up(view.DestroyView)

    def retrieve_objects(self, objects, properties):
        """Read ``properties`` of the given managed objects (all of one type) in one call, in the given order."""
        if not objects:
            return []
        obj_type = type(objects[0])
        obj_specs = [vmodl.query.PropertyCollector.ObjectSpec(obj=obj, skip=False) for obj in objects]
        by_moid = dict((item["moid"], item) for item in self._collect(obj_specs, {obj_type: properties})[obj_type])
        return [by_moid.get(obj._moId, {"obj": obj, "moid": obj._moId}) for obj in objects]

    def _collect(self, obj_specs, specs):
        prop_specs = [vmodl.query.PropertyCollector.PropertySpec(type=obj_type, pathSet=list(paths), all=False)
                      for obj_type, paths in specs.items()]
        filter_spec = vmodl.query.PropertyCollector.FilterSpec(objectSet=obj_specs, propSet=prop_specs)
        collector = self.content.propertyCollector
        options = vmodl.query.PropertyCollector.RetrieveOptions()
        found = dict((obj_type, []) for obj_type in specs)
        result = self.call(collector.RetrievePropertiesEx, specSet=[filter_spec], options=options)
        while result is not None:
            for obj_content in result.objects:
                item = {"obj": obj_content.obj, "moid": obj_content.obj._moId}
                for prop in obj_content.propSet or []:
                    item[prop.name] = prop.val
                found[_spec_type(obj_content.obj, found)].append(item)
            if not result.token:
                break
            result = self.call(collector.ContinueRetrievePropertiesEx, token=result.token)
        return found

    def call(self, method, *args, **kwargs):
        """Call a pyVmomi method; faults and connection errors come back as typed errors.

        A read whose connection drops, and any call vCenter's proxy answers with 503, is sent again with backoff
        (``_retry``); a change whose answer is lost raises ``ChangeInDoubt`` instead of being sent twice.
        """
        name = method_name(method)
        attempt = 0
        while True:
            try:
                return method(*args, **kwargs)
            except vmodl.MethodFault as err:
                raise ApiError("vCenter %s answered %s: %s" % (self.endpoint, fault_name(err), fault_message(err)),
                               fault=fault_name(err))
            except (socket.error, ssl.SSLError, http_client.HTTPException) as err:
                unavailable = str(err).startswith("503")
                if not (unavailable or _retry.soap_read(name)):
                    raise _retry.in_doubt(self.endpoint, name, err)
                if attempt + 1 >= _retry.ATTEMPTS:
                    raise ConnectionFailure("Lost the connection to vCenter %s: %s (%s, %d attempts)."
                                            % (self.endpoint, err, name, attempt + 1))
            self.retried += 1
            time.sleep(_retry.delay(attempt))
            attempt += 1

    def clean_up(self, method):
        """A call that frees a session object; vCenter frees it at logout anyway, so a failure is not an error."""
        try:
            self.call(method)
        except GpuopsError:
            pass

    # ---- tasks ------------------------------------------------------------------------------------------------

    def wait_for_tasks(self, tasks, timeout=3600):
        """Wait for all ``tasks`` to finish; one PropertyCollector filter, WaitForUpdatesEx, no sleeping.

        Returns a list, in the order of ``tasks``, of dicts ``{"state": "success"|"error", "result", "error",
        "fault"}``. Raises ``TimeoutExpired`` when they are not all done after ``timeout`` seconds.
        """
        if not tasks:
            return []
        index = dict((task._moId, position) for position, task in enumerate(tasks))
        seen = dict((moid, {}) for moid in index)
        outcomes = [None] * len(tasks)

        def on_change(moid, name, value):
            seen[moid][name] = value
            if seen[moid].get("info.state") in ("success", "error"):
                outcomes[index[moid]] = self._outcome(seen[moid])

        if not self._watch(tasks, vim.Task, ["info.state", "info.error", "info.result"], on_change,
                           lambda: all(outcome is not None for outcome in outcomes), timeout):
            running = sum(1 for outcome in outcomes if outcome is None)
            raise TimeoutExpired("%d of %d vCenter tasks were still running after %s seconds."
                                 % (running, len(tasks), timeout))
        return outcomes

    def run_tasks(self, starters, parallel=8, timeout=3600):
        """Start tasks ``parallel`` at a time and wait for each batch together.

        ``starters`` is a list of callables that each start one task and return it. Returns one outcome per
        starter, in order (see ``wait_for_tasks``); a starter that raises a ``GpuopsError`` gets an error outcome
        and the others still run.
        """
        outcomes = []
        for first in range(0, len(starters), max(1, parallel)):
            batch = starters[first:first + max(1, parallel)]
            started = []
            batch_outcomes = [None] * len(batch)
            for position, starter in enumerate(batch):
                try:
                    started.append((position, starter()))
                except GpuopsError as err:
                    batch_outcomes[position] = {"state": "error", "result": None, "error": err.message,
                                                "fault": err.details.get("fault") or type(err).__name__}
            finished = self.wait_for_tasks([task for position, task in started], timeout=timeout)
            for (position, task), outcome in zip(started, finished):
                batch_outcomes[position] = outcome
            outcomes.extend(batch_outcomes)
        return outcomes

    def wait_for_values(self, objects, path, wanted, timeout):
        """Wait until property ``path`` of every object is in ``wanted``; returns the MoIDs that did not get there.

        One PropertyCollector filter and WaitForUpdatesEx, as for tasks: no polling loop of reads.
        """
        if not objects:
            return []
        values = {}

        def on_change(moid, name, value):
            if name == path:
                values[moid] = value

        def waiting():
            return [obj._moId for obj in objects if values.get(obj._moId) not in wanted]

        self._watch(objects, type(objects[0]), [path], on_change, lambda: not waiting(), timeout)
        return waiting()

    def wait_until(self, obj, paths, done, timeout):
        """Follow ``paths`` of one object until ``done(values)`` holds; returns ``(reached, values)``."""
        values = {}

        def on_change(moid, name, value):
            values[name] = value

        reached = self._watch([obj], type(obj), paths, on_change, lambda: done(values), timeout)
        return reached, values

    def _watch(self, objects, obj_type, paths, on_change, finished, timeout):
        """Follow ``paths`` of ``objects`` through one PropertyCollector filter and WaitForUpdatesEx, handing each
        change to ``on_change(moid, path, value)``, until ``finished()`` holds (True) or ``timeout`` passes (False).
        """
        collector = self.call(self.content.propertyCollector.CreatePropertyCollector)
        try:
            obj_specs = [vmodl.query.PropertyCollector.ObjectSpec(obj=obj) for obj in objects]
            prop_spec = vmodl.query.PropertyCollector.PropertySpec(type=obj_type, pathSet=paths, all=False)
            self.call(collector.CreateFilter,
                      vmodl.query.PropertyCollector.FilterSpec(objectSet=obj_specs, propSet=[prop_spec]),
                      partialUpdates=True)
            deadline = time.monotonic() + timeout
            version = ""
            while not finished():
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                options = vmodl.query.PropertyCollector.WaitOptions(maxWaitSeconds=max(1, int(min(remaining, 60))))
                update = self.call(collector.WaitForUpdatesEx, version, options)
                if update is None:
                    continue
                version = update.version
                for filter_set in update.filterSet:
                    for obj_update in filter_set.objectSet:
                        for change in obj_update.changeSet or []:
                            on_change(obj_update.obj._moId, change.name, change.val)
            return True
        finally:
            self.clean_up(collector.DestroyPropertyCollector)

    @staticmethod
    def _outcome(values):
        error = values.get("info.error")
        return {
            "state": values.get("info.state"),
            "result": values.get("info.result"),
            "error": fault_message(error) if error is not None else None,
            "fault": fault_name(error) if error is not None else None,
        }

    # ---- finders ----------------------------------------------------------------------------------------------

    def datacenter(self, name):
        for item in self.retrieve({vim.Datacenter: ["name"]})[vim.Datacenter]:
            if item["name"] == name:
                return item["obj"]
        raise NotFound("Datacenter '%s' was not found in vCenter %s." % (name, self.endpoint),
                       hint="Check the datacenter option.")

    def cluster(self, name, datacenter=None):
        """The cluster named ``name`` (optionally within ``datacenter``); NotFound lists the clusters that exist."""
        root = self.datacenter(datacenter) if datacenter else None
        clusters = self.retrieve({vim.ClusterComputeResource: ["name"]}, root=root)[vim.ClusterComputeResource]
        matches = [item["obj"] for item in clusters if item["name"] == name]
        if len(matches) == 1:
            return matches[0]
        if len(matches) > 1:
            raise NotFound("Cluster name '%s' is ambiguous: %d clusters carry it." % (name, len(matches)),
                           hint="Set the datacenter option to choose one.")
        known = sorted(item["name"] for item in clusters)
        raise NotFound("Cluster '%s' was not found%s." % (name, " in datacenter '%s'" % datacenter if datacenter else ""),
                       hint="Known clusters: %s." % (", ".join(known) or "none"))

    def hosts(self, properties, cluster=None, esxi_hostnames=None, datacenter=None, compute_properties=()):
        """Hosts chosen by cluster, names and/or datacenter, with ``properties`` read, in one PropertyCollector call.

        Returns retrieve-style items (``obj``, ``moid``, the properties) with the names of the host's ``cluster``
        (None when standalone) and ``datacenter`` added, and ``compute_resource``: the item of the cluster or
        standalone compute resource the host belongs to (with ``compute_properties`` read), or None; in the order of
        ``esxi_hostnames``, else by name.
        """
        hosts, tree = self.hosts_with(properties, {}, compute_properties)
        compute = tree[vim.ComputeResource]
        datacenters = [item["name"] for item in tree[vim.Datacenter]]
        if datacenter:
            if datacenter not in datacenters:
                raise NotFound("Datacenter '%s' was not found in vCenter %s." % (datacenter, self.endpoint),
                               hint="Known datacenters: %s." % (", ".join(sorted(datacenters)) or "none"))
            hosts = [item for item in hosts if item["datacenter"] == datacenter]
        if cluster:
            places = set((item["datacenter"], item["cluster"]) for item in hosts if item["cluster"] == cluster)
            if not any(isinstance(item["obj"], vim.ClusterComputeResource) and item["name"] == cluster
                       for item in compute):
                known = sorted(set(item["name"] for item in compute
                                   if isinstance(item["obj"], vim.ClusterComputeResource)))
                raise NotFound("Cluster '%s' was not found in vCenter %s." % (cluster, self.endpoint),
                               hint="Known clusters: %s." % (", ".join(known) or "none"))
            if len(places) > 1:
                raise NotFound("Cluster name '%s' is ambiguous: datacenters %s each have one."
                               % (cluster, ", ".join(sorted(place[0] for place in places))),
                               hint="Set the datacenter option to choose one.")
            hosts = [item for item in hosts if item["cluster"] == cluster]
        if esxi_hostnames:
            by_name = dict((item["name"], item) for item in hosts)
            missing = [name for name in esxi_hostnames if name not in by_name]
            if missing:
                scope = cluster and " in cluster '%s'" % cluster or datacenter and " in datacenter '%s'" % datacenter
                raise NotFound("ESXi host(s) not found%s: %s." % (scope or "", ", ".join(missing)),
                               hint="Known hosts: %s." % (", ".join(sorted(by_name)) or "none"))
            return [by_name[name] for name in dict.fromkeys(esxi_hostnames)]
        return hosts

    def hosts_with(self, properties, others, compute_properties=()):
        """Every host (placed as ``hosts()`` places them, by name) and the objects of ``others`` (a vim type -> the
        property paths to read) in the same PropertyCollector call.

        Returns ``(hosts, tree)``: ``tree`` maps each type read (those of ``others``, ``vim.ComputeResource``,
        ``vim.Datacenter`` and ``vim.Folder`` with its ``name`` and ``parent``) to its retrieve-style items.
        """
        specs = {
            vim.HostSystem: sorted(set(properties) | {"name", "parent"}),
            vim.ComputeResource: sorted(set(compute_properties) | {"name", "parent"}),
            vim.Datacenter: ["name"],
            vim.Folder: ["name", "parent"],
        }
        for obj_type, paths in others.items():
            specs[obj_type] = sorted(set(paths) | set(specs.get(obj_type, ())))
        tree = self.retrieve(specs)
        compute = dict((item["moid"], item) for item in tree[vim.ComputeResource])
        datacenters = dict((item["moid"], item["name"]) for item in tree[vim.Datacenter])
        folders = dict((item["moid"], item.get("parent")) for item in tree[vim.Folder])

        def place(host):
            owner = compute.get(host["parent"]._moId) if host.get("parent") is not None else None
            if owner is None:
                return None, None
            cluster_name = owner["name"] if isinstance(owner["obj"], vim.ClusterComputeResource) else None
            obj = owner.get("parent")
            while obj is not None and obj._moId not in datacenters:
                obj = folders.get(obj._moId)
            return cluster_name, datacenters.get(obj._moId) if obj is not None else None

        hosts = []
        for item in tree[vim.HostSystem]:
            item["cluster"], item["datacenter"] = place(item)
            item["compute_resource"] = compute.get(item["parent"]._moId) if item.get("parent") is not None else None
            hosts.append(item)
        return sorted(hosts, key=lambda item: item["name"]), tree
