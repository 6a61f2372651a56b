# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The GPU fleet report: what ``gpu_info`` and the doctor saw, as data and as one self-contained HTML page.

``build()`` joins the GPU inventory with the doctor's report (temperatures, drivers, guests' licenses, findings).
``render_html()`` draws it: per cluster and host, each GPU as an inline SVG with one box per vGPU slot. The page
loads nothing: inline CSS and SVG only, every text escaped.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from html import escape

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import InputError
from ansible_collections.gpuops.vgpu.plugins.plugin_utils import _fleet_drivers, _k8s_sharing
from ansible_collections.gpuops.vgpu.plugins.plugin_utils._doctor_servers import GPU_KEYS as SERVER_GPU_KEYS

STATUSES = ("FAIL", "WARN", "SKIP", "PASS")
LAYERS = ("bmc", "host", "cluster", "vm", "guest", "server", "k8s")
SERVER_CHECKS = ("server_driver", "fabric", "gpus_nvlink", "dcgm")
GPU_KEYS = ("pci_id", "device_name", "model", "memory_mib", "graphics_type", "xorg_restart_pending", "vgpu_mode",
            "profile", "profiles", "used", "max", "free", "vms", "passthrough")


def _index(items, key="name"):
    return dict((item.get(key), item) for item in items or [] if isinstance(item, dict))


def build(inventory, doctor=None, title="GPU fleet", generated_at=None, clusters=None, metrics=None):
    """The report's data from a ``gpu_info`` result and, optionally, the doctor's report (its JSON file) and each
    guest's metrics URL (``{guest: url}``, the node exporter that gpuops.vgpu.gpu_monitoring feeds)."""
    doctor = doctor or {}
    facts = doctor.get("facts") or {}
    seen = _index(facts.get("hosts"))
    cluster_facts = _index(facts.get("clusters"))
    findings = list(doctor.get("findings") or [])
    hosts = [h for h in inventory.get("hosts") or [] if not clusters or h.get("cluster") in clusters]
    order = []
    for host in hosts:
        if host.get("cluster") not in order:
            order.append(host.get("cluster"))
    report_clusters = []
    for name in sorted(order, key=lambda c: (c is None, c or "")):
        members = [_host(h, seen.get(h["name"]) or {}, findings) for h in hosts if h.get("cluster") == name]
        automation = cluster_facts.get(name) or {}
        report_clusters.append({
            "name": name,
            "drs": _automation(automation, "drs"),
            "dpm": _automation(automation, "dpm"),
            "hosts": sorted(members, key=lambda h: h["name"]),
        })
    gpus = [g for c in report_clusters for h in c["hosts"] for g in h["gpus"]]
    guests = _guests(facts, metrics or {})
    servers = _servers(facts, findings)
    return {
        "title": title,
        "generated_at": generated_at,
        "vcenter": facts.get("vcenter") or doctor.get("vcenter"),
        "doctor_generated_at": doctor.get("generated_at"),
        "summary": {
            "hosts": sum(len(c["hosts"]) for c in report_clusters),
            "gpus": len(gpus),
            "vgpus": sum(g["used"] or 0 for g in gpus),
            "carved_slots": sum(g["max"] or 0 for g in gpus if g["profiles"]),
            "idle_gpus": sum(1 for g in gpus if not g["profiles"] and not _whole(g)),
            "passthrough_gpus": sum(1 for g in gpus if _whole(g)),
            "guests": len(guests),
            "licensed": sum(1 for g in guests if g["licensed"]),
            "servers": len(servers),
            "server_gpus": sum(len(server["gpus"]) for server in servers),
            "findings": dict((s, sum(1 for f in findings if f.get("status") == s)) for s in STATUSES),
        },
        "clusters": report_clusters,
        "guests": guests,
        "servers": servers,
        "k8s_nodes": _k8s_nodes(facts),
        "findings": findings,
        "drivers": _fleet_drivers.progress([h["driver_branch"] for c in report_clusters for h in c["hosts"]],
                                           [g["driver_branch"] for g in guests]),
    }


def _automation(cluster, key):
    if cluster.get(key + "_enabled") is None:
        return None
    return "%s (%s)" % ("on" if cluster[key + "_enabled"] else "off", cluster.get(key + "_behavior"))


def _whole(gpu):
    """Whether the GPU is handed to passthrough (DirectPath I/O)."""
    return bool((gpu.get("passthrough") or {}).get("enabled"))


def _host(host, seen, findings):
    by_pci = _index((seen.get("nvidia_smi") or {}).get("gpus"), "pci_id")
    sets = dict((pci, group) for group in seen.get("nvlink_sets") or [] for pci in group if len(group) > 1)
    gpus = []
    for gpu in host.get("gpus") or []:
        entry = dict((k, gpu.get(k)) for k in GPU_KEYS)
        entry["vms"] = list(entry["vms"] or [])
        entry["profiles"] = list(entry["profiles"] or [])
        measured = by_pci.get(gpu.get("pci_id")) or {}
        entry["temperature_celsius"] = measured.get("temperature_gpu_c")
        entry["ecc"] = measured.get("ecc_mode_current")
        entry["nvlink_set"] = sets.get(gpu.get("pci_id"))
        gpus.append(entry)
    mine = [f for f in findings if f.get("object") == host["name"] or str(f.get("object")).startswith(
        host["name"] + " ")]
    bmc = seen.get("bmc") or {}
    return {
        "name": host["name"],
        "connection_state": host.get("connection_state"),
        "maintenance_mode": host.get("maintenance_mode"),
        "inlet_celsius": bmc.get("inlet_celsius"),
        "server": " ".join(p for p in (bmc.get("vendor"), bmc.get("model")) if p) or None,
        "driver": (seen.get("driver") or {}).get("version"),
        "driver_branch": _fleet_drivers.branch_of((seen.get("driver") or {}).get("version")),
        "gpus": gpus,
        "findings": dict((s, sum(1 for f in mine if f.get("status") == s)) for s in ("FAIL", "WARN")),
    }


def _guests(facts, metrics):
    vms = _index(facts.get("vms"))
    where = {}
    for host in facts.get("hosts") or []:
        for gpu in host.get("gpus") or []:
            for vm in gpu.get("vms") or []:
                where[vm] = (host["name"], gpu.get("pci_id"))
    guests = []
    for guest in facts.get("guests") or []:
        vm = vms.get(guest.get("vm")) or {}
        lic = next((g for g in guest.get("gpus") or [] if g.get("licensed") is not None), {})
        host, gpu = where.get(guest.get("vm"), (vm.get("host"), None))
        guests.append({
            "name": guest.get("name"), "vm": guest.get("vm"), "host": host, "gpu": gpu,
            "profile": ", ".join(vm.get("profiles") or []) or guest.get("profile"),
            "power_state": vm.get("power_state"),
            "driver": guest.get("driver_version"), "cuda": guest.get("cuda_toolkit"),
            "driver_branch": _fleet_drivers.branch_of(guest.get("driver_version")),
            "license_status": lic.get("license_status") or (guest.get("error") and "not read") or None,
            "licensed": lic.get("licensed"), "license_expiry": lic.get("license_expiry"),
            "license_product": lic.get("license_product"), "metrics_url": metrics.get(guest.get("name")),
        })
    return sorted(guests, key=lambda g: g["name"] or "")


def _servers(facts, findings):
    """Per bare-metal GPU server the doctor read: its driver (version, branch, kernel module flavour), GPUs with their
    fabric state, NVLink, last DCGM verdict, and the status of each of its doctor checks."""
    servers = []
    for server in facts.get("servers") or []:
        smi = server.get("nvidia_smi") or {}
        installed = server.get("installed") or {}
        version = smi.get("driver_version") if smi.get("present") else None
        checks = dict((f["check"], {"status": f["status"], "message": f["message"],
                                    "remediation": f.get("remediation")})
                      for f in findings if f.get("layer") == "server" and f.get("object") == server.get("name"))
        pairs = server.get("nvlink_pairs") or []
        servers.append({
            "name": server.get("name"),
            "error": server.get("error"),
            "driver": version,
            "driver_branch": _fleet_drivers.branch_of(version),
            "driver_installed": installed.get("version"),
            "kernel_module": (server.get("kernel_module") or {}).get("flavour") or installed.get("flavour"),
            "cuda": smi.get("cuda_version") if smi.get("present") else None,
            "nvidia_smi_error": None if smi.get("present") or not smi else "%s: %s" % (smi.get("kind"), smi.get("msg")),
            "gpus": [dict((k, gpu.get(k)) for k in SERVER_GPU_KEYS) for gpu in server.get("gpus") or []],
            "pci_gpus": len(server.get("pci_gpus") or []) if server.get("pci_gpus") is not None else None,
            "nvlink_pairs": len(pairs),
            "nvlink_links": sorted(set(pair.get("links") for pair in pairs)),
            "dcgm": dict((k, (server.get("dcgm") or {}).get(k)) for k in ("status", "message", "source"))
            if server.get("dcgm") else None,
            "checks": checks,
            "status": min([c["status"] for c in checks.values()] or ["SKIP"], key=STATUSES.index),
        })
    return sorted(servers, key=lambda server: server["name"] or "")


def _k8s_nodes(facts):
    """Per Kubernetes GPU node: its sharing mode and the nvidia.com/gpu count its device plugin will advertise."""
    nodes = []
    for node in facts.get("k8s_nodes") or []:
        requested, gpus = node.get("requested") or {}, (node.get("mig") or {}).get("value")
        row = {"name": node["name"], "mode": requested.get("mode") or "none", "config_name": None,
               "gpu_count": None, "advertised": {}, "error": None}
        if gpus is None:
            row["error"] = "GPUs not read: %s" % (node.get("mig") or {}).get("error")
        else:
            try:
                plan = _k8s_sharing.plan(node["name"], gpus, row["mode"], requested.get("replicas"),
                                         requested.get("mig_strategy"), requested.get("mig_layout"),
                                         requested.get("rename_by_default", False),
                                         requested.get("fail_requests_greater_than_one", False))
            except InputError as err:
                row["error"] = err.message
            else:
                row.update(config_name=plan["config_name"], gpu_count=plan["gpu_count"],
                           advertised=plan["advertised"])
        nodes.append(row)
    return sorted(nodes, key=lambda n: n["name"])


# -- HTML ----------------------------------------------------------------------------------------------------------

CSS = """
:root{--ink:#1a202c;--muted:#5a6473;--line:#d5dbe3;--bg:#f6f8fa;--card:#fff;--used:#2b6cb0;--free:#fff;
--pass:#2f855a;--warn:#b7791f;--fail:#c53030;--skip:#718096}
*{box-sizing:border-box}body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;
color:var(--ink);background:var(--bg)}header{background:#1f2937;color:#f9fafb;padding:20px 32px}
header h1{margin:0 0 4px;font-size:24px}header .meta{color:#cbd5e1}main{padding:8px 32px 32px}
.meta{color:var(--muted);margin:2px 0 10px}.cards{display:flex;flex-wrap:wrap;gap:12px;margin-top:14px}
.card{background:#374151;border-radius:8px;padding:8px 14px;min-width:120px}.card b{display:block;font-size:20px}
.card span{color:#d1d5db;font-size:12px}h2{margin:26px 0 2px;font-size:20px}
.hosts{display:flex;flex-wrap:wrap;gap:14px}.host{background:var(--card);border:1px solid var(--line);
border-radius:10px;padding:12px 14px;width:430px}.host h3{margin:0;font-size:16px;word-break:break-all}
.gpu{margin:10px 0 0}.gpu figcaption{font-size:13px}.gpu .profile{font-weight:600}
.badge{display:inline-block;border-radius:10px;padding:0 8px;font-size:12px;font-weight:600;color:#fff}
.PASS{background:var(--pass)}.WARN{background:var(--warn)}.FAIL{background:var(--fail)}.SKIP{background:var(--skip)}
table{border-collapse:collapse;width:100%;background:var(--card);border:1px solid var(--line)}
th,td{text-align:left;padding:6px 8px;border-bottom:1px solid var(--line);vertical-align:top}
th{background:#eef1f5;font-size:12px;text-transform:uppercase;letter-spacing:.03em;color:var(--muted)}
td.fix{color:var(--muted)}details{margin-top:10px}summary{cursor:pointer;color:var(--muted)}
.legend{display:flex;gap:16px;font-size:12px;color:var(--muted);margin:10px 0 0}
.legend i{display:inline-block;width:14px;height:10px;border:1px solid #64748b;margin-right:5px;vertical-align:-1px}
footer{padding:0 32px 24px;color:var(--muted);font-size:12px}
"""

SVG_WIDTH, SVG_HEIGHT = 400, 46


def _e(value):
    return escape("" if value is None else str(value), quote=True)


def _plural(count, word):
    return "%d %s%s" % (count, word, "" if count == 1 else "s")


def render_html(data):
    """One self-contained HTML page of ``build()``'s data."""
    parts = ['<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n',
             '<meta name="viewport" content="width=device-width, initial-scale=1">\n',
             "<title>%s</title>\n<style>%s</style>\n</head>\n<body>\n" % (_e(data["title"]), CSS)]
    parts.append(_header(data))
    parts.append("<main>\n")
    for cluster in data["clusters"]:
        parts.append(_cluster(cluster))
    parts.append(_guests_table(data["guests"]))
    parts.append(_servers_table(data.get("servers") or []))
    parts.append(_k8s_table(data.get("k8s_nodes") or []))
    parts.append(_findings_table(data["findings"], data.get("doctor_generated_at")))
    parts.append("</main>\n<footer>gpuops.vgpu fleet report. Slots: one box per vGPU the GPU can hold in its "
                 "profile; an idle GPU takes any size of its model.</footer>\n</body>\n</html>\n")
    return "".join(parts)


def _header(data):
    s = data["summary"]
    found = s["findings"]
    cards = [
        (s["hosts"], "hosts"), (s["gpus"], "GPUs"),
        ("%d / %d" % (s["vgpus"], s["carved_slots"]), "vGPUs in carved slots"), (s["idle_gpus"], "idle GPUs"),
        (s.get("passthrough_gpus", 0), "GPUs in passthrough"),
        ("%d / %d" % (s["licensed"], s["guests"]), "guests licensed"),
        (" ".join("%d %s" % (found[k], k) for k in ("FAIL", "WARN") if found[k]) or
         ("all passed" if found["PASS"] else "not run"), "doctor"),
        _fleet_drivers.summary_card(data["drivers"], s["hosts"], s["guests"]),
    ]
    if s.get("servers"):
        cards.insert(5, ("%d / %d" % (s["servers"], s["server_gpus"]), "GPU servers / their GPUs"))
    meta = ["generated %s" % _e(data.get("generated_at"))]
    if data.get("vcenter"):
        meta.insert(0, "vCenter %s" % _e(data["vcenter"]))
    if data.get("doctor_generated_at"):
        meta.append("doctor ran %s" % _e(data["doctor_generated_at"]))
    return ('<header>\n<h1>%s</h1>\n<div class="meta">%s</div>\n<div class="cards">%s</div>\n</header>\n' % (
        _e(data["title"]), " · ".join(meta),
        "".join('<div class="card"><b>%s</b><span>%s</span></div>' % (_e(v), _e(k)) for v, k in cards)))


def _cluster(cluster):
    name = cluster["name"] or "Standalone hosts"
    meta = []
    if cluster["drs"]:
        meta.append("DRS %s" % cluster["drs"])
    if cluster["dpm"]:
        meta.append("DPM %s" % cluster["dpm"])
    meta.append(_plural(len(cluster["hosts"]), "host"))
    out = ['<section class="cluster" data-cluster="%s">\n<h2>%s</h2>\n<p class="meta">%s</p>\n<div class="hosts">\n'
           % (_e(cluster["name"] or ""), _e(name), _e(" · ".join(meta)))]
    for host in cluster["hosts"]:
        out.append(_host_card(host))
    out.append('</div>\n<div class="legend"><span><i style="background:#2b6cb0"></i>vGPU running</span>'
               '<span><i style="background:#fff;border-style:dashed"></i>free slot</span>'
               '<span><i style="background:#eef2f7;border-style:dashed"></i>idle GPU</span>'
               '<span><i style="background:#fde2e2"></i>not in Shared Direct</span></div>\n</section>\n')
    return "".join(out)


def _host_card(host):
    state = host["connection_state"] or "unknown"
    if host["maintenance_mode"]:
        state += ", maintenance mode"
    meta = [state]
    if host["server"]:
        meta.append(host["server"])
    if host["inlet_celsius"] is not None:
        meta.append("inlet %s °C" % host["inlet_celsius"])
    meta.append("vGPU Manager %s%s" % (host["driver"], " (%s)" % host["driver_branch"] if host["driver_branch"] else "")
                if host["driver"] else "driver not known")
    badges = "".join(' <span class="badge %s">%d %s</span>' % (s, n, s) for s, n in sorted(host["findings"].items())
                     if n)
    out = ['<article class="host" data-host="%s">\n<h3>%s%s</h3>\n<p class="meta">%s</p>\n' % (
        _e(host["name"]), _e(host["name"]), badges, _e(" · ".join(meta)))]
    if not host["gpus"]:
        out.append('<p class="meta">No NVIDIA GPU seen by vCenter.</p>\n')
    for gpu in host["gpus"]:
        out.append(_gpu_figure(host["name"], gpu))
    out.append("</article>\n")
    return "".join(out)


def _passthrough_figure(host, gpu):
    """A GPU passed through whole: the VM that holds it and its NVLink set."""
    state = gpu["passthrough"]
    holder = "%s (%s)" % (state["vm"], state.get("vm_power_state")) if state.get("vm") else "free"
    extra = ["DirectPath I/O" + ("" if state.get("active") else ", active after a reboot")]
    if gpu.get("nvlink_set"):
        extra.append("NVLink set " + " + ".join(gpu["nvlink_set"]))
    details = [gpu["device_name"] or "GPU", gpu["pci_id"]]
    svg = ('<svg width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-label="%s"><rect x="1" y="1" width="%d" '
           'height="%d" rx="6" fill="%s" stroke="#1e4e8c"%s/><text x="%d" y="%d" text-anchor="middle" font-size="13" '
           'fill="%s">%s</text></svg>') % (
        SVG_WIDTH, SVG_HEIGHT, SVG_WIDTH, SVG_HEIGHT, _e(" ".join(details)), SVG_WIDTH - 2, SVG_HEIGHT - 2,
        "#2b6cb0" if state.get("vm") else "#ffffff", "" if state.get("vm") else ' stroke-dasharray="5 4"',
        SVG_WIDTH // 2, SVG_HEIGHT // 2 + 5, "#ffffff" if state.get("vm") else "#475569",
        _e(_fit(state.get("vm") or "whole GPU, free", SVG_WIDTH - 12)))
    return ('<figure class="gpu passthrough" data-host="%s" data-pci="%s" data-vm="%s">\n%s\n<figcaption>'
            '<span class="profile">passthrough</span> · <span class="slots">%s</span><br>%s<br>'
            '<span class="meta">%s</span></figcaption>\n</figure>\n') % (
        _e(host), _e(gpu["pci_id"]), _e(state.get("vm") or ""), svg, _e(holder), _e(" · ".join(details)),
        _e(" · ".join(extra)))


def _gpu_figure(host, gpu):
    if _whole(gpu):
        return _passthrough_figure(host, gpu)
    used = gpu["used"] or 0
    carved = bool(gpu["profiles"])
    free = gpu["free"] if carved else None
    profile = ", ".join(gpu["profiles"]) if carved else "idle"
    if carved and gpu["max"] is not None:
        slots = "%d used · %d free" % (used, free if free is not None else 0)
    elif carved:
        slots = "%d used" % used
    elif gpu["graphics_type"] == "sharedDirect":
        slots = "no vGPU · takes any profile"
    else:
        slots = "no vGPU · needs Shared Direct"
    details = [gpu["device_name"] or "GPU", gpu["pci_id"]]
    if gpu["memory_mib"]:
        details.append("%d GB" % round(gpu["memory_mib"] / 1024.0))
    mode = "Shared Direct" if gpu["graphics_type"] == "sharedDirect" else "%s (not Shared Direct)" % (
        gpu["graphics_type"] or "unknown")
    if gpu["xorg_restart_pending"]:
        mode += ", Xorg restart pending"
    extra = [mode]
    if gpu["temperature_celsius"] is not None:
        extra.append("%s °C" % gpu["temperature_celsius"])
    if gpu["ecc"] is not None:
        extra.append("ECC %s" % ("on" if gpu["ecc"] else "off"))
    vms = '<br><span class="vms">VMs: %s</span>' % _e(", ".join(gpu["vms"])) if gpu["vms"] else ""
    return ('<figure class="gpu" data-host="%s" data-pci="%s" data-profile="%s" data-used="%d" data-free="%s" '
            'data-max="%s">\n%s\n<figcaption><span class="profile">%s</span> · <span class="slots">%s</span>%s<br>'
            '%s<br><span class="meta">%s</span></figcaption>\n</figure>\n') % (
        _e(host), _e(gpu["pci_id"]), _e(profile if carved else ""), used, _e("" if free is None else free),
        _e("" if gpu["max"] is None else gpu["max"]), _svg(gpu), _e(profile), _e(slots), vms,
        _e(" · ".join(details)), _e(" · ".join(extra)))


def _svg(gpu):
    """The GPU's framebuffer as a bar of vGPU slots: filled for running vGPUs, dashed for free ones."""
    w, h = SVG_WIDTH, SVG_HEIGHT
    label = "%s %s" % (gpu["device_name"] or "GPU", gpu["pci_id"])
    out = ['<svg width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-label="%s">' % (
        w, h, w, h, _e(label))]
    shared = gpu["graphics_type"] == "sharedDirect"
    total = gpu["max"] if gpu["profiles"] and gpu["max"] else (gpu["used"] or 0)
    if not total:
        fill = "#eef2f7" if shared else "#fde2e2"
        text = "idle" if shared else "%s: no vGPU until Shared Direct" % (gpu["graphics_type"] or "unknown")
        out.append('<rect x="1" y="1" width="%d" height="%d" rx="6" fill="%s" stroke="#64748b" '
                   'stroke-dasharray="5 4"/>' % (w - 2, h - 2, fill))
        out.append('<text x="%d" y="%d" text-anchor="middle" font-size="13" fill="#475569">%s</text>' % (
            w // 2, h // 2 + 5, _e(text)))
    else:
        gap = 4
        slot = (w - 2 - gap * (total - 1)) / float(total)
        vms = list(gpu["vms"] or [])
        for index in range(total):
            x = 1 + index * (slot + gap)
            running = index < (gpu["used"] or 0)
            name = vms[index] if running and index < len(vms) else ""
            out.append('<g><title>%s</title><rect x="%.1f" y="1" width="%.1f" height="%d" rx="5" fill="%s" '
                       'stroke="%s"%s/>' % (
                           _e(name or ("vGPU running" if running else "free slot")), x, slot, h - 2,
                           "#2b6cb0" if running else "#ffffff", "#1e4e8c" if running else "#64748b",
                           "" if running else ' stroke-dasharray="5 4"'))
            if running and name and slot >= 34:
                out.append('<text x="%.1f" y="%d" text-anchor="middle" font-size="11" fill="#ffffff">%s</text>' % (
                    x + slot / 2, h // 2 + 4, _e(_fit(name, slot))))
            out.append("</g>")
    out.append("</svg>")
    return "".join(out)


def _fit(text, width):
    """Shorten a label to what fits in ``width`` pixels at 11 px (about 6.3 px a character)."""
    room = max(3, int(width / 6.3))
    return text if len(text) <= room else text[:room - 1] + "…"


def _guests_table(guests):
    out = ['<section class="guests">\n<h2>Guests</h2>\n']
    if not guests:
        out.append('<p class="meta">No guest read by the doctor.</p>\n</section>\n')
        return "".join(out)
    out.append("<table>\n<tr><th>guest</th><th>VM</th><th>host · GPU</th><th>profile</th><th>driver</th>"
               "<th>CUDA</th><th>license</th><th>expiry</th><th>metrics</th></tr>\n")
    for g in guests:
        status = "PASS" if g["licensed"] else ("FAIL" if g["licensed"] is False else "SKIP")
        out.append('<tr data-guest="%s"><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td>'
                   '<td><span class="badge %s">%s</span> %s</td><td>%s</td><td>%s</td></tr>\n' % (
                       _e(g["name"]), _e(g["name"]), _e(g["vm"]),
                       _e(" · ".join(p for p in (g["host"], g["gpu"]) if p)),
                       _e(g["profile"]), _e("%s (%s)" % (g["driver"], g["driver_branch"]) if g["driver_branch"]
                                            else g["driver"]), _e(g["cuda"]), status,
                       _e(g["license_status"] or "unknown"), _e(g["license_product"]), _e(g["license_expiry"]),
                       _metrics_link(g.get("metrics_url"))))
    out.append("</table>\n</section>\n")
    return "".join(out)


def _servers_table(servers):
    """The bare-metal GPU servers: nothing where the inventory has none."""
    if not servers:
        return ""
    out = ['<section class="servers">\n<h2>GPU servers</h2>\n<table>\n<tr><th>server</th><th>driver</th>'
           '<th>kernel modules</th><th>GPUs</th><th>fabric</th><th>NVLink</th><th>DCGM</th><th>doctor</th></tr>\n']
    for server in servers:
        checks = server["checks"]
        cells = []
        for check in SERVER_CHECKS:
            found = checks.get(check)
            cells.append('<span class="badge %s">%s</span> %s' % (
                _e(found["status"]), _e(found["status"]), _e(found["message"])) if found else "—")
        if server["driver"]:
            driver = "%s (%s)" % (server["driver"], server["driver_branch"]) if server["driver_branch"] \
                else server["driver"]
        else:
            driver = "none" + (" (%s installed)" % server["driver_installed"] if server["driver_installed"] else "")
        gpus = server["gpus"]
        models = ", ".join(sorted(set(gpu["name"] or "?" for gpu in gpus)))
        problems = [f for f in checks.values() if f["status"] in ("FAIL", "WARN")]
        out.append(
            '<tr data-server="%s"><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td>'
            '<td><span class="badge %s">%s</span>%s</td></tr>\n' % (
                _e(server["name"]), _e(server["name"]), _e(driver), _e(server["kernel_module"] or "—"),
                _e("%d × %s" % (len(gpus), models) if gpus else "—"), cells[1], cells[2], cells[3],
                _e(server["status"]), _e(server["status"]),
                "".join('<br><span class="fix">%s: %s</span>' % (_e(f["message"]), _e(f["remediation"]))
                        for f in problems)))
    out.append("</table>\n</section>\n")
    return "".join(out)


def _metrics_link(url):
    if not url or not url.startswith(("http://", "https://")):
        return "—"
    return '<a href="%s">node exporter</a>' % _e(url)


def _k8s_table(nodes):
    if not nodes:
        return ""
    out = ['<section class="k8s">\n<h2>Kubernetes GPU nodes</h2>\n<table>\n<tr><th>node</th><th>sharing</th>'
           '<th>device plugin config</th><th>nvidia.com/gpu</th><th>advertises</th></tr>\n']
    for n in nodes:
        out.append('<tr data-node="%s"><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n' % (
            _e(n["name"]), _e(n["name"]), _e(n["mode"]), _e(n["config_name"] or n["error"]), _e(n["gpu_count"]),
            _e(", ".join("%d %s" % (c, r) for r, c in sorted(n["advertised"].items())))))
    out.append("</table>\n</section>\n")
    return "".join(out)


def _findings_table(findings, generated_at):
    out = ['<section class="findings">\n<h2>Doctor findings</h2>\n']
    if not findings:
        out.append('<p class="meta">The doctor has not run: run playbooks/doctor.yml first.</p>\n</section>\n')
        return "".join(out)
    out.append('<p class="meta">From the doctor run of %s.</p>\n' % _e(generated_at or "this play"))
    ordered = sorted(findings, key=lambda f: (STATUSES.index(f["status"]) if f["status"] in STATUSES else 9,
                                              LAYERS.index(f["layer"]) if f["layer"] in LAYERS else 9))
    problems = [f for f in ordered if f["status"] != "PASS"]
    passed = [f for f in ordered if f["status"] == "PASS"]
    if problems:
        out.append(_rows(problems))
    else:
        out.append('<p class="meta">Every check passed.</p>\n')
    if passed:
        out.append("<details><summary>%s passed</summary>\n%s</details>\n" % (
            _plural(len(passed), "check"), _rows(passed)))
    out.append("</section>\n")
    return "".join(out)


def _rows(findings):
    out = ["<table>\n<tr><th>status</th><th>layer</th><th>object</th><th>check</th><th>finding</th>"
           "<th>remediation</th></tr>\n"]
    for f in findings:
        out.append('<tr class="finding"><td><span class="badge %s">%s</span></td><td>%s</td><td>%s</td><td>%s</td>'
                   '<td>%s</td><td class="fix">%s</td></tr>\n' % (
                       _e(f["status"]), _e(f["status"]), _e(f["layer"]), _e(f["object"]), _e(f["check"]),
                       _e(f["message"]), _e(f.get("remediation"))))
    out.append("</table>\n")
    return "".join(out)
