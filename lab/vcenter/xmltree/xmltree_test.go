package xmltree

import (
	"encoding/xml"
	"testing"
)

const message = `<?xml version="1.0" encoding="UTF-8"?>
<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body>` +
	`<RetrievePropertiesResponse xmlns="urn:vim25"><returnval><obj type="HostSystem">ha-host</obj>` +
	`<propSet><name>name</name><val xsi:type="xsd:string">esxi &amp; co</val></propSet><!-- kept --></returnval>` +
	`</RetrievePropertiesResponse></soapenv:Body></soapenv:Envelope>`

func TestRoundTripAndChanges(t *testing.T) {
	root, err := Parse([]byte(message))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(root.Bytes()); got != message {
		t.Fatalf("round trip changed the message:\n%s", got)
	}
	obj := root.Find("obj")
	if typ, value, ok := obj.MoRef(); !ok || typ != "HostSystem" || value != "ha-host" {
		t.Errorf("moRef: %q %q %v", typ, value, ok)
	}
	if text, ok := root.Find("val").Text(); !ok || text != "esxi & co" {
		t.Errorf("text: %q %v", text, ok)
	}
	if _, ok := root.Find("propSet").Text(); ok {
		t.Error("an element with child elements has text")
	}
	obj.SetAttr("type", "VirtualMachine")
	obj.SetText("vm-1")
	root.Find("propSet").Child("name").Remove()
	names := 0
	root.Walk(func(n *Node) {
		if n.Name() == "name" {
			names++
		}
	})
	if names != 0 || root.Find("val").Parent().Name() != "propSet" {
		t.Errorf("after removing name: %d name elements", names)
	}
	ret := root.Find("returnval")
	ret.SetElements(NewElement("obj", []xml.Attr{{Name: xml.Name{Local: "type"}, Value: "Folder"}}, "ha-folder-vm"))
	if got := string(ret.Bytes()); got != `<returnval><obj type="Folder">ha-folder-vm</obj></returnval>` {
		t.Errorf("after SetElements: %s", got)
	}
}
