"""The error answer every part of a lab BMC raises: an HTTP status with a DMTF Base message."""


class RedfishError(Exception):
    """An error answer: HTTP status plus a Redfish message."""

    def __init__(self, status, message, message_id="Base.1.8.GeneralError", related=None, headers=None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.message_id = message_id
        self.related = related or []
        self.headers = headers or {}

    def body(self):
        info = {"MessageId": self.message_id, "Message": self.message, "Severity": "Warning"}
        if self.related:
            info["RelatedProperties"] = self.related
        return {"error": {"code": self.message_id, "message": self.message, "@Message.ExtendedInfo": [info]}}
