"""A lab BMC's session service: sessions made by POST with the vendor's Location, listed, read and deleted."""

from werkzeug.wrappers import Response

from bmc_errors import RedfishError
from bmc_http import json_response, link, norm


class SessionHandlers:
    """The SessionService and its sessions at the vendor's path (``self.paths["sessions"]``)."""

    def session_service(self, request):
        self.allow(request, "GET")
        return json_response({
            "@odata.id": "/redfish/v1/SessionService", "@odata.type": "#SessionService.v1_1_8.SessionService",
            "Id": "SessionService", "Name": "Session Service", "ServiceEnabled": True, "SessionTimeout": 1800,
            "Sessions": link(self.paths["sessions"]),
        })

    def sessions(self, request):
        self.allow(request, "GET", "POST")
        base = norm(self.paths["sessions"])
        if request.method == "POST":
            body = self.body(request) or {}
            session_id, token = self.bmc.create_session(body.get("UserName", ""), body.get("Password", ""))
            location = "%s/%s" % (base, session_id)
            if self.bmc.profile["sessions"].get("absolute_location"):
                location = "https://%s%s%s" % (request.host.rsplit(":", 1)[0], location,
                                               "/" if self.paths["sessions"].endswith("/") else "")
            return json_response(self.session_body(session_id), 201, {"X-Auth-Token": token, "Location": location})
        ids = self.bmc.session_ids()
        return json_response({
            "@odata.id": self.paths["sessions"], "@odata.type": "#SessionCollection.SessionCollection",
            "Name": "Session Collection", "Members@odata.count": len(ids),
            "Members": [link("%s/%s" % (base, i)) for i in ids],
        })

    def session_body(self, session_id):
        return {"@odata.id": "%s/%s" % (norm(self.paths["sessions"]), session_id),
                "@odata.type": "#Session.v1_3_0.Session", "Id": session_id, "Name": "User Session",
                "UserName": self.bmc.username}

    def session(self, request, session_id):
        self.allow(request, "GET", "DELETE")
        if request.method == "DELETE":
            self.bmc.delete_session(session_id)
            return Response(status=204)
        if session_id not in self.bmc.session_ids():
            raise RedfishError(404, "The session %s does not exist." % session_id, "Base.1.8.ResourceMissingAtURI")
        return json_response(self.session_body(session_id))
