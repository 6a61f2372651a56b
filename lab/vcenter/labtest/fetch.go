package labtest

import (
	"context"
	"testing"

	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
)

// fetchCall is the SOAP exchange of PropertyCollector.Fetch, which govmomi has no public method for. The client
// reads the response by its element name; the Go type names are the client's own.
type fetchCall struct {
	Req    *FetchRequest  `xml:"urn:vim25 Fetch,omitempty"`
	Res    *fetchResponse `xml:"urn:vim25 FetchResponse,omitempty"`
	Fault_ *soap.Fault    `xml:"http://schemas.xmlsoap.org/soap/envelope/ Fault,omitempty"`
}

// FetchRequest is the body of a PropertyCollector.Fetch request.
type FetchRequest struct {
	This types.ManagedObjectReference `xml:"_this"`
	Prop string                       `xml:"prop"`
}

type fetchResponse struct {
	Returnval types.AnyType `xml:"returnval,omitempty,typeattr"`
}

func (b *fetchCall) Fault() *soap.Fault { return b.Fault_ }

// Fetch reads one property of an object the way pyVmomi (8 and later) reads a managed object's attribute: the value,
// nil for an unset property, or the SOAP fault.
func Fetch(t *testing.T, c soap.RoundTripper, ref types.ManagedObjectReference, prop string) (types.AnyType, error) {
	t.Helper()
	call := &fetchCall{Req: &FetchRequest{This: ref, Prop: prop}}
	if err := c.RoundTrip(context.Background(), call, call); err != nil {
		return nil, err
	}
	if call.Res == nil {
		t.Fatalf("Fetch %s.%s: no response", ref, prop)
	}
	return call.Res.Returnval, nil
}
