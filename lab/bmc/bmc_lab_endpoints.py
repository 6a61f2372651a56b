"""The unauthenticated ``/lab`` endpoints of a lab BMC, which tests read ground truth from and inject faults with;
no fault or chaos ever applies to them."""

from werkzeug.wrappers import Response

from bmc_errors import RedfishError
from bmc_http import error_response, json_response


class LabEndpoints:
    """``/lab/state``, ``/lab/stats``, ``/lab/faults``, ``/lab/chaos``, ``/lab/reset`` and ``/lab/config``."""

    def lab_endpoints(self):
        return {
            ("GET", "/lab/state"): lambda request: json_response(self.ground_truth()),
            ("GET", "/lab/stats"): lambda request: json_response(self.bmc.statistics()),
            ("POST", "/lab/stats/reset"): self.lab_stats_reset,
            ("GET", "/lab/faults"): lambda request: json_response(self.bmc.ground_truth()["faults"]),
            ("POST", "/lab/faults"): self.lab_fault,
            ("DELETE", "/lab/faults"): self.lab_clear_faults,
            ("POST", "/lab/reset"): self.lab_reset,
            ("POST", "/lab/config"): self.lab_config,
            ("GET", "/lab/chaos"): lambda request: json_response(self.chaos.report()),
            ("POST", "/lab/chaos"): self.lab_chaos,
            ("DELETE", "/lab/chaos"): lambda request: json_response(self.chaos.stop()),
        }

    def lab(self, request, path):
        handler = self.lab_routes.get((request.method, path))
        if handler is None:
            return json_response({"error": "unknown lab endpoint %s %s" % (request.method, path),
                                  "endpoints": ["%s %s" % key for key in sorted(self.lab_routes)]}, 404)
        try:
            return handler(request)
        except RedfishError as err:
            return error_response(err)

    def lab_fault(self, request):
        fault = self.body(request)
        if not isinstance(fault, dict):
            raise RedfishError(400, "POST a JSON object such as {\"kind\": \"http_error\", \"status\": 503}.")
        self.bmc.add_fault(fault)
        if fault.get("kind") == "down" and self.on_down:
            self.on_down()
        return json_response(self.bmc.ground_truth()["faults"])

    def lab_chaos(self, request):
        try:
            self.chaos.start(self.body(request) or {})
        except (TypeError, ValueError) as err:
            raise RedfishError(400, "chaos: %s" % err)
        return json_response(self.chaos.report(), 201)

    def lab_clear_faults(self, request):
        self.bmc.clear_faults()
        return Response(status=204)

    def lab_stats_reset(self, request):
        self.bmc.reset_statistics()
        return Response(status=204)

    def lab_reset(self, request):
        self.bmc.factory_reset()
        self.manager_parts.reset()
        self.cooling.reset()
        self.scp.results.clear()
        self.logs.reset()
        self.chaos.stop()
        if self.sushy_written:  # new drivers write their state files: tens of milliseconds
            self.drivers, self.sushy_written = self.new_drivers(), False
        return json_response(self.ground_truth())

    def ground_truth(self):
        """The BMC's state with its cooling setting, and the fan speeds it gives in both places."""
        truth = self.bmc.ground_truth()
        truth["thermal"]["fans"] = self.thermal.fans_data
        truth["cooling"] = self.cooling.state(self.bmc.profile["thermal"]["fans"])
        truth["power"] = self.power.ground_truth()
        truth["logs"] = self.logs.ground_truth()
        return truth

    def lab_config(self, request):
        body = self.body(request) or {}
        self.bmc.configure(reset_seconds=body.get("reset_seconds"))
        return json_response(self.bmc.ground_truth())
