package main

import (
	"strings"
	"testing"
	"time"
)

func TestFaultValidation(t *testing.T) {
	known := func(name string) bool { return name == "vm-1" }
	delay := 100
	cases := map[string]struct {
		fault Fault
		want  string
	}{
		"unknown kind":      {Fault{Kind: "explode"}, `kind "explode" is not one of`},
		"needs a VM":        {Fault{Kind: faultFailReconfigure}, `needs "vm"`},
		"unknown VM":        {Fault{Kind: faultShutdownIgnored, VM: "vm-9"}, `no VM named "vm-9"`},
		"drop takes no VM":  {Fault{Kind: faultDropConnection, VM: "vm-1"}, `takes no "vm"`},
		"negative count":    {Fault{Kind: faultDropConnection, Count: -1}, "count must be at least 1"},
		"delay needed":      {Fault{Kind: faultShutdownDelay}, `needs "delay_ms"`},
		"delay elsewhere":   {Fault{Kind: faultShutdownIgnored, VM: "vm-1", DelayMS: &delay}, `"delay_ms" only applies`},
		"message elsewhere": {Fault{Kind: faultDropConnection, Message: "x"}, `"message" only applies`},
	}
	for name, tc := range cases {
		f := tc.fault
		if err := f.Validate(known); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", name, err, tc.want)
		}
	}
	f := Fault{Kind: faultFailReconfigure, VM: "vm-1"}
	if err := f.Validate(known); err != nil || f.Count != 1 {
		t.Errorf("fail_reconfigure defaults to one use: %v %+v", err, f)
	}
}

func TestFaultUse(t *testing.T) {
	s := NewFaultStore()
	s.Add(Fault{Kind: faultFailReconfigure, VM: "vm-1", Count: 2})
	s.Add(Fault{Kind: faultShutdownIgnored, VM: "vm-2"})
	delay := 1500
	s.Add(Fault{Kind: faultShutdownDelay, DelayMS: &delay})
	if s.Take(faultFailReconfigure, "vm-2", "") != nil {
		t.Error("a VM's fault applied to another VM")
	}
	for i := 0; i < 2; i++ {
		if s.Take(faultFailReconfigure, "vm-1", "") == nil {
			t.Fatalf("use %d of a two-use fault missing", i+1)
		}
	}
	if s.Take(faultFailReconfigure, "vm-1", "") != nil {
		t.Error("fault used more than its count")
	}
	for i := 0; i < 3; i++ {
		if s.Take(faultShutdownIgnored, "vm-2", "") == nil {
			t.Fatal("a fault without count must last until cleared")
		}
	}
	if d := s.ShutdownDelay("any-vm", time.Second); d != 1500*time.Millisecond {
		t.Errorf("shutdown delay for any VM: %s", d)
	}
	if n := s.Clear(); n != 2 || len(s.List()) != 0 || s.ShutdownDelay("vm", time.Second) != time.Second {
		t.Errorf("clear removed %d faults, left %v", n, s.List())
	}
}

func TestScanCall(t *testing.T) {
	body := `<?xml version="1.0" encoding="UTF-8"?><soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/">` +
		`<soapenv:Header><operationID>x</operationID></soapenv:Header><soapenv:Body><ReconfigVM_Task xmlns="urn:vim25">` +
		`<_this type="VirtualMachine">vm-42</_this><spec></spec></ReconfigVM_Task></soapenv:Body></soapenv:Envelope>`
	call := scanCall([]byte(body))
	if call.method != "ReconfigVM_Task" || call.this.Type != "VirtualMachine" || call.this.Value != "vm-42" {
		t.Errorf("scanned %+v", call)
	}
	if call := scanCall([]byte("not xml")); call.method != "" {
		t.Errorf("garbage scanned as %+v", call)
	}
}

func TestDropConnectionByMethod(t *testing.T) {
	s := NewFaultStore()
	f := Fault{Kind: faultDropConnection, Method: "ReconfigVM_Task"}
	if err := f.Validate(func(string) bool { return true }); err != nil {
		t.Fatal(err)
	}
	s.Add(f)
	if s.Take(faultDropConnection, "", "RetrievePropertiesEx") != nil {
		t.Fatal("a fault for ReconfigVM_Task applied to another method")
	}
	if s.Take(faultDropConnection, "", "ReconfigVM_Task") == nil {
		t.Fatal("the fault did not apply to its method")
	}
	if s.Take(faultDropConnection, "", "ReconfigVM_Task") != nil {
		t.Fatal("the fault applied more often than its count")
	}
	bad := Fault{Kind: faultFailReconfigure, VM: "vm-1", Method: "ReconfigVM_Task"}
	if bad.Validate(func(string) bool { return true }) == nil {
		t.Fatal("method accepted on a fault kind other than drop_connection")
	}
}
