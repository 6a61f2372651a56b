# Appended by tools/docs.sh to the conf.py that `antsibull-docs sphinx-init` writes.
# pylint: disable=undefined-variable  # extensions is defined by the conf.py this is appended to.
import os
import shutil
import zlib

# The guides stay Markdown under docs/ (README links them); Sphinx reads them with MyST, from a copy placed beside
# the collection's extra docs, and the guides page (docs/docsite/rst/guides.rst) gets their table of contents.
extensions.append('myst_parser')
source_suffix = {'.rst': 'restructuredtext', '.md': 'markdown'}
myst_heading_anchors = 3

_GUIDES_SOURCE = os.environ['GPUOPS_DOCS_GUIDES']
_DOCSITE = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'rst', 'collections', 'gpuops', 'vgpu', 'docsite')
_GUIDES_DEST = os.path.join(_DOCSITE, 'guides')
shutil.rmtree(_GUIDES_DEST, ignore_errors=True)
os.makedirs(_GUIDES_DEST)
_guides = sorted(name for name in os.listdir(_GUIDES_SOURCE) if name.endswith('.md'))
for _name in _guides:
    shutil.copyfile(os.path.join(_GUIDES_SOURCE, _name), os.path.join(_GUIDES_DEST, _name))
with open(os.path.join(_DOCSITE, 'guides.rst'), 'a', encoding='utf-8') as _page:
    _page.write('\n.. toctree::\n   :maxdepth: 1\n\n' + ''.join('   guides/%s\n' % name[:-3] for name in _guides))

# The generated pages link to a few labels of Ansible's own docsite. Its inventory cannot be fetched from here, so the
# build writes one holding just those labels (Sphinx inventory version 2: a header, then zlib-compressed lines of
# "name domain:role priority uri display-name"); the links still point at docs.ansible.com.
_ANSIBLE_DOCS = 'https://docs.ansible.com/projects/ansible/devel/'
_ANSIBLE_LABELS = {
    'common_return_values': ('reference_appendices/common_return_values.html#common-return-values',
                             'Return Values'),
    'ansible_configuration_settings': ('reference_appendices/config.html#ansible-configuration-settings',
                                       'Ansible Configuration Settings'),
    # A module with an action plugin (gpu_guest_info) says so, linking here.
    'action_plugins': ('plugins/action.html#action-plugins', 'Action plugins'),
    # The inventory plugin's constructed options point at ansible.builtin.constructed.
    'ansible_collections.ansible.builtin.constructed_inventory': (
        'collections/ansible/builtin/constructed_inventory.html#ansible-collections-ansible-builtin-constructed-inventory',
        'ansible.builtin.constructed inventory'),
}
# The inventory cache's options (doc fragment inventory_cache) name the settings' environment variables.
_ANSIBLE_ENVVARS = ('ANSIBLE_CACHE_PLUGIN', 'ANSIBLE_CACHE_PLUGIN_CONNECTION', 'ANSIBLE_CACHE_PLUGIN_PREFIX',
                    'ANSIBLE_CACHE_PLUGIN_TIMEOUT')
_INVENTORY = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'ansible_devel.inv')
with open(_INVENTORY, 'wb') as _inventory:
    _inventory.write(b'# Sphinx inventory version 2\n# Project: Ansible\n# Version: devel\n'
                     b'# The remainder of this file is compressed using zlib.\n')
    _lines = ''.join('%s std:label -1 %s %s\n' % (label, uri, title)
                     for label, (uri, title) in sorted(_ANSIBLE_LABELS.items()))
    _lines += ''.join('%s std:envvar 1 reference_appendices/config.html#envvar-%s -\n' % (name, name)
                      for name in _ANSIBLE_ENVVARS)
    _inventory.write(zlib.compress(_lines.encode('utf-8')))
intersphinx_mapping = {'ansible_devel': (_ANSIBLE_DOCS, _INVENTORY)}
