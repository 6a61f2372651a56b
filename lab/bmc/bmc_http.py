"""HTTP plumbing of a lab BMC: JSON answers with OData-Version, Redfish errors, and the handlers the routes are
made of (read-only, writable, actions, collection members), each refusing a method its resource does not take."""

import json

from werkzeug.wrappers import Response

from bmc_errors import RedfishError


def norm(path):
    return path.rstrip("/") or "/"


def deep_merge(base, overlay):
    for key, value in overlay.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            deep_merge(base[key], value)
        else:
            base[key] = value
    return base


def link(path):
    return {"@odata.id": path}


def json_response(body, status=200, headers=None):
    response = Response(json.dumps(body, indent=1), status=status, mimetype="application/json")
    for name, value in (headers or {}).items():
        response.headers[name] = value
    response.headers["OData-Version"] = "4.0"
    return response


def error_response(err):
    headers = dict(err.headers)
    if err.status == 401:
        headers.setdefault("WWW-Authenticate", 'Basic realm="Redfish"')
    return json_response(err.body(), err.status, headers)


class HttpHandlers:
    """Handlers over render and patch functions, for the BMC's routes."""

    def body(self, request):
        try:
            return json.loads(request.get_data(as_text=True) or "null")
        except ValueError:
            raise RedfishError(400, "The request body is not valid JSON.", "Base.1.8.MalformedJSON")

    def read_only(self, render):
        def handler(request):
            self.allow(request, "GET")
            return json_response(render())
        return handler

    def writable(self, render, patch):
        def handler(request):
            self.allow(request, "GET", "PATCH")
            if request.method == "PATCH":
                return json_response(patch(self.body(request)))
            return json_response(render())
        return handler

    def action(self, act):
        def handler(request):
            self.allow(request, "POST")
            return json_response(act(self.body(request)))
        return handler

    def accepted_action(self, act):
        def handler(request):
            self.allow(request, "POST")
            status, headers, body = act(self.body(request))
            if body is None:
                response = Response(status=status)
                response.headers.update(dict(headers, **{"OData-Version": "4.0"}))
                return response
            return json_response(body, status, headers)
        return handler

    def read_only_member(self, render):
        def handler(request, member):
            self.allow(request, "GET")
            body = render(member)
            if body is None:
                raise RedfishError(404, "The resource at the URI %s was not found." % request.path,
                                   "Base.1.8.ResourceMissingAtURI")
            return json_response(body, headers={"ETag": body["@odata.etag"]} if "@odata.etag" in body else None)
        return handler

    def allow(self, request, *methods):
        """Refuses a method the resource does not take; HEAD goes wherever GET does (``Allow`` lists both)."""
        if "GET" in methods:
            methods = ("GET", "HEAD") + tuple(m for m in methods if m != "GET")
        request.environ["lab.allow"] = ", ".join(methods)
        if request.method not in methods:
            raise RedfishError(405, "The method %s is not allowed on %s." % (request.method, request.path),
                               "Base.1.8.OperationNotAllowed", headers={"Allow": ", ".join(methods)})
