"""The account service of a lab BMC: the lab user's account and Redfish's three predefined roles, read-only (the
lab has one user; accounts are not created or changed through it)."""

import zlib

from bmc_inventory import collection, link

ACCOUNT_SERVICE = "/redfish/v1/AccountService"
# Redfish's predefined roles and their privileges (DSP0266, "Roles").
ROLES = {
    "Administrator": ["Login", "ConfigureManager", "ConfigureUsers", "ConfigureSelf", "ConfigureComponents"],
    "Operator": ["Login", "ConfigureSelf", "ConfigureComponents"],
    "ReadOnly": ["Login", "ConfigureSelf"],
}


class AccountResources:
    def __init__(self, username, account_id):
        self.username = username
        self.account_id = account_id

    def resources(self):
        """Resource path -> renderer."""
        return {ACCOUNT_SERVICE: self.service,
                ACCOUNT_SERVICE + "/Accounts": lambda: collection(
                    ACCOUNT_SERVICE + "/Accounts", "ManagerAccount", "Accounts Collection", [self.account_id]),
                ACCOUNT_SERVICE + "/Roles": lambda: collection(
                    ACCOUNT_SERVICE + "/Roles", "Role", "Roles Collection", sorted(ROLES))}

    def collections(self):
        """Collection path -> renderer of one member by id (None when there is no such member)."""
        return {ACCOUNT_SERVICE + "/Accounts": self.account, ACCOUNT_SERVICE + "/Roles": self.role}

    def service(self):
        return {"@odata.id": ACCOUNT_SERVICE, "@odata.type": "#AccountService.v1_5_0.AccountService",
                "Id": "AccountService", "Name": "Account Service", "ServiceEnabled": True,
                "Accounts": link(ACCOUNT_SERVICE + "/Accounts"), "Roles": link(ACCOUNT_SERVICE + "/Roles")}

    def account(self, member):
        if member != self.account_id:
            return None
        return {"@odata.id": "%s/Accounts/%s" % (ACCOUNT_SERVICE, member),
                "@odata.type": "#ManagerAccount.v1_4_0.ManagerAccount", "Id": member, "Name": "User Account",
                "@odata.etag": 'W/"%08x"' % zlib.crc32(("%s/%s" % (member, self.username)).encode()),
                "UserName": self.username, "RoleId": "Administrator", "AccountTypes": ["Redfish"], "Enabled": True,
                "Locked": False,
                "Password": None, "Links": {"Role": link(ACCOUNT_SERVICE + "/Roles/Administrator")}}

    def role(self, member):
        if member not in ROLES:
            return None
        return {"@odata.id": "%s/Roles/%s" % (ACCOUNT_SERVICE, member), "@odata.type": "#Role.v1_2_4.Role",
                "Id": member, "Name": "%s Role" % member, "RoleId": member, "IsPredefined": True,
                "AssignedPrivileges": ROLES[member]}
