package simobj

import (
	"strings"

	"github.com/vmware/govmomi/vim25/types"
)

// EscapeName writes an entity name as vCenter stores it (vSphere Web Services API, ManagedEntity.name,
// developer.broadcom.com/xapis/vsphere-web-services-api/latest/vim.ManagedEntity.html): a slash becomes %2f, a
// backslash %5c and a percent sign %25, unless the percent sign already starts one of these escapes, so a name
// escaped once stays as it is.
func EscapeName(name string) string {
	if !strings.ContainsAny(name, `/\%`) {
		return name
	}
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		switch c := name[i]; c {
		case '/':
			b.WriteString("%2f")
		case '\\':
			b.WriteString("%5c")
		case '%':
			if next := strings.ToLower(name[i+1:]); strings.HasPrefix(next, "2f") || strings.HasPrefix(next, "5c") ||
				strings.HasPrefix(next, "25") {
				b.WriteByte(c)
			} else {
				b.WriteString("%25")
			}
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// Number is the number in a vCenter id (host-21 -> 21); vCenter names a host's managers after it.
func Number(ref types.ManagedObjectReference) string {
	return ref.Value[strings.LastIndex(ref.Value, "-")+1:]
}
