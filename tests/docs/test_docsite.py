# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The docsite as a reader sees it: `make docs` builds it, headless Chromium opens every module and role page.

What each page must show comes from ansible-doc (the collection's own docs, doc fragments merged), not from the
site: every top-level option of a module and its examples, every entry point of a role and its options. Screenshots
of a module page and a role page land in .tmp/docs-screenshots (DOCS_SCREENSHOTS overrides the folder).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import glob
import json
import os
import subprocess
import sys
import tempfile

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SITE = os.path.join(ROOT, ".tmp", "docs", "build", "html")
PAGES = os.path.join(SITE, "collections", "gpuops", "vgpu")
BIN = os.path.dirname(sys.executable)
MODULES = sorted(os.path.basename(path)[:-3] for path in glob.glob(os.path.join(ROOT, "plugins", "modules", "*.py")))
ROLES = sorted(os.path.basename(os.path.dirname(os.path.dirname(path)))
               for path in glob.glob(os.path.join(ROOT, "roles", "*", "meta", "argument_specs.yml")))
GUIDES = sorted(os.path.basename(path)[:-3] for path in glob.glob(os.path.join(ROOT, "docs", "*.md")))
CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run", "--window-size=1280,1600")


def _env():
    return dict(os.environ, PATH=BIN + os.pathsep + os.environ["PATH"],
                ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, ".tmp", "collections"))


def _ansible_doc(kind, names):
    out = subprocess.run([os.path.join(BIN, "ansible-doc"), "--json", "-t", kind] + ["gpuops.vgpu." + name
                         for name in names], env=_env(), check=True, stdout=subprocess.PIPE,
                         universal_newlines=True).stdout
    return json.loads(out)


@pytest.fixture(scope="module")
def site():
    """Builds the site from the checkout as it is, as `make docs` does (a stale build would prove nothing)."""
    subprocess.run([os.path.join(ROOT, "tools", "docs.sh")], env=_env(), check=True, stdout=subprocess.DEVNULL)
    return SITE


@pytest.fixture(scope="module")
def browser(site):
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    profile = tempfile.mkdtemp(prefix="chromium-profile-")
    for flag in CHROMIUM_FLAGS + ("--user-data-dir=" + profile,):
        options.add_argument(flag)
    driver = webdriver.Chrome(options=options, service=Service("/usr/bin/chromedriver"))
    yield driver
    driver.quit()
    subprocess.run(["rm", "-rf", profile], check=False)


def _open(browser, page):
    path = os.path.join(PAGES, page)
    assert os.path.exists(path), "the site has no page %s" % page
    browser.get("file://" + path)
    return browser


def _screenshot(browser, name):
    folder = os.environ.get("DOCS_SCREENSHOTS") or os.path.join(ROOT, ".tmp", "docs-screenshots")
    os.makedirs(folder, exist_ok=True)
    browser.save_screenshot(os.path.join(folder, name + ".png"))


def _shown(browser, css):
    found = [element for element in browser.find_elements(By.CSS_SELECTOR, css) if element.is_displayed()]
    assert found, "nothing shown for %s on %s" % (css, browser.current_url)
    return found


def _lines(text):
    return [line.strip() for line in text.splitlines() if line.strip()]


def test_every_module_page_shows_its_options_and_examples(browser):
    docs = _ansible_doc("module", MODULES)
    assert sorted(name.split(".")[-1] for name in docs) == MODULES
    for module in MODULES:
        doc = docs["gpuops.vgpu." + module]
        _open(browser, module + "_module.html")
        assert "gpuops.vgpu.%s module" % module in _shown(browser, "h1")[0].text
        table = _shown(browser, "section#parameters table.ansible-option-table")[0]
        for option in doc["doc"]["options"]:
            assert table.find_elements(By.ID, "parameter-" + option), "%s: option %s missing" % (module, option)
        shown = "\n".join(block.text for block in _shown(browser, "section#examples div.highlight"))
        assert _lines(shown) == _lines(doc["examples"]), "%s: the examples shown differ from EXAMPLES" % module
        assert "gpuops.vgpu." + module in shown
        if module == "vm_vgpu":
            _screenshot(browser, "vm_vgpu_module")


def test_every_role_page_shows_its_entry_points_and_their_options(browser):
    docs = _ansible_doc("role", ROLES)
    for role in ROLES:
        entry_points = docs["gpuops.vgpu." + role]["entry_points"]
        _open(browser, role + "_role.html")
        assert "gpuops.vgpu.%s role" % role in _shown(browser, "h1")[0].text
        for entry_point, spec in entry_points.items():
            _shown(browser, 'section[id^="entry-point-%s-"]' % entry_point.replace("_", "-"))
            for option in spec.get("options") or {}:
                anchor = "parameter-%s--%s" % (entry_point, option)
                assert browser.find_elements(By.ID, anchor), "%s: %s option %s missing" % (role, entry_point, option)
        if role == "vgpu_assign":
            _screenshot(browser, "vgpu_assign_role")


def _pages_linked(links):
    hrefs = [link.get_attribute("href") for link in links]
    return {href.split("#")[0].rsplit("/", 1)[-1] for href in hrefs if href}


def test_collection_index_links_every_module_role_and_guide(browser):
    _open(browser, "index.html")
    links = _pages_linked(browser.find_elements(By.CSS_SELECTOR, "a"))
    assert {module + "_module.html" for module in MODULES} <= links
    assert {role + "_role.html" for role in ROLES} <= links
    _open(browser, "docsite/guides.html")
    assert {guide + ".html" for guide in GUIDES} <= _pages_linked(_shown(browser, "div.toctree-wrapper a"))
