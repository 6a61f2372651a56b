# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""One tree, two formats: ``nvidia-smi -q`` text and ``-q -x`` XML as driver 525 prints them.

A node is ``(label, tag, value)`` or ``(label, tag, [nodes])``. Text: keys padded to a 42-column key field as in
the 470 and 535 recordings (q_host_vgpu_sriov_a16_gpu0_ahv_driver470.txt, q_a10_passthrough_ecc_on_driver535.129.txt);
XML: DTD v12 with tab indents as in xml_v12_quadro_p2000_pascal_driver525.xml.
"""

from xml.sax.saxutils import escape, quoteattr

KEY_WIDTH = 42


def _text(nodes, depth, lines):
    for label, _tag, value in nodes:
        indent = "    " * depth
        if isinstance(value, list):
            lines.append(indent + label)
            _text(value, depth + 1, lines)
        else:
            lines.append("%s%s: %s" % (indent, label.ljust(KEY_WIDTH - len(indent)), value))


def render_text(head, gpus):
    lines = ["", "==============NVSMI LOG==============", ""]
    _text(head[:-1], 0, lines)
    lines.append("")
    _text(head[-1:], 0, lines)
    for bus_id, sections in gpus:
        lines.append("GPU " + bus_id)
        _text(sections, 1, lines)
        lines.append("")
    return "\n".join(lines) + "\n"


def _xml(nodes, depth, lines):
    for _label, tag, value in nodes:
        indent = "\t" * depth
        if isinstance(value, list):
            lines.append("%s<%s>" % (indent, tag))
            _xml(value, depth + 1, lines)
            lines.append("%s</%s>" % (indent, tag))
        else:
            lines.append("%s<%s>%s</%s>" % (indent, tag, escape(value), tag))


def render_xml(head, gpus):
    lines = ['<?xml version="1.0" ?>', '<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v12.dtd">', "<nvidia_smi_log>"]
    _xml(head, 1, lines)
    for bus_id, sections in gpus:
        lines.append("\t<gpu id=%s>" % quoteattr(bus_id))
        _xml(sections, 2, lines)
        lines.append("\t</gpu>")
    lines.append("</nvidia_smi_log>")
    return "\n".join(lines) + "\n"
