// Package soaphttp is the lab's SOAP on the wire, beside the simulator's: what a request calls before it is decoded,
// vim25 answers and faults written as vCenter writes them, and responses buffered before they are sent.
package soaphttp

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/vmware/govmomi/vim25/types"
)

// Call is what the lab needs to know about a SOAP request before the simulator decodes it.
type Call struct {
	Method string
	This   types.ManagedObjectReference
}

// ScanCall reads the method name and _this of a SOAP request, stopping at _this.
func ScanCall(body []byte) Call {
	var call Call
	dec := xml.NewDecoder(bytes.NewReader(body))
	inBody := false
	for {
		tok, err := dec.Token()
		if err != nil {
			return call
		}
		start, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		switch {
		case !inBody:
			inBody = start.Name.Local == "Body"
		case call.Method == "":
			call.Method = start.Name.Local
		case start.Name.Local == "_this":
			for _, a := range start.Attr {
				if a.Name.Local == "type" {
					call.This.Type = a.Value
				}
			}
			var value string
			if dec.DecodeElement(&value, &start) == nil {
				call.This.Value = strings.TrimSpace(value)
			}
			return call
		default:
			return call
		}
	}
}

// WriteSystemError answers a SOAP request with vCenter's SystemError fault.
func WriteSystemError(w http.ResponseWriter, reason string) {
	var text bytes.Buffer
	_ = xml.EscapeText(&text, []byte(reason))
	w.Header().Set("Content-Type", "text/xml; charset=utf-8")
	w.WriteHeader(http.StatusInternalServerError)
	fmt.Fprintf(w, `%s<soapenv:Envelope xmlns:soapenc="http://schemas.xmlsoap.org/soap/encoding/" `+
		`xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" xmlns:xsd="http://www.w3.org/2001/XMLSchema" `+
		`xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><soapenv:Body><soapenv:Fault>`+
		`<faultcode>ServerFaultCode</faultcode><faultstring>A general system error occurred: %s</faultstring>`+
		`<detail><SystemErrorFault xmlns="urn:vim25" xsi:type="SystemError"><reason>%s</reason></SystemErrorFault>`+
		`</detail></soapenv:Fault></soapenv:Body></soapenv:Envelope>`, xml.Header, text.String(), text.String())
}

// Recorder buffers a response so that the lab's lock is not held while a slow client reads it.
type Recorder struct {
	header http.Header
	Status int
	Body   bytes.Buffer
}

// NewRecorder is an empty Recorder.
func NewRecorder() *Recorder { return &Recorder{header: http.Header{}} }

func (r *Recorder) Header() http.Header { return r.header }

func (r *Recorder) Write(b []byte) (int, error) {
	if r.Status == 0 {
		r.Status = http.StatusOK
	}
	return r.Body.Write(b)
}

func (r *Recorder) WriteHeader(status int) {
	if r.Status == 0 {
		r.Status = status
	}
}

// Flush sends the buffered response.
func (r *Recorder) Flush(w http.ResponseWriter) {
	for k, v := range r.header {
		w.Header()[k] = v
	}
	if r.Status == 0 {
		r.Status = http.StatusOK
	}
	w.WriteHeader(r.Status)
	_, _ = w.Write(r.Body.Bytes())
}

// ReadBody reads a request's whole body, or answers 400 and reports false.
func ReadBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	body, err := io.ReadAll(r.Body)
	_ = r.Body.Close()
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return nil, false
	}
	return body, true
}

const soapEnvelope = `<soapenv:Envelope xmlns:soapenc="http://schemas.xmlsoap.org/soap/encoding/" ` +
	`xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" xmlns:xsd="http://www.w3.org/2001/XMLSchema" ` +
	`xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><soapenv:Body>%s</soapenv:Body></soapenv:Envelope>`

// WriteResponse answers a SOAP request with body, the response element.
func WriteResponse(w http.ResponseWriter, body string) {
	w.Header().Set("Content-Type", "text/xml; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	fmt.Fprintf(w, "%s"+soapEnvelope, xml.Header, body)
}

// WriteObjectNotFound answers as vCenter does for a reference to an object that does not exist.
func WriteObjectNotFound(w http.ResponseWriter, ref types.ManagedObjectReference) {
	WriteFault(w, fmt.Sprintf("The object '%s' has already been deleted or has not been completely created",
		ref.Value), "ManagedObjectNotFound", fmt.Sprintf(`<obj type="%s">%s</obj>`, ref.Type, ref.Value))
}

// WriteFault answers with a SOAP fault of the given vim25 type; detail is the fault's properties, already XML.
func WriteFault(w http.ResponseWriter, message, faultType, detail string) {
	var text bytes.Buffer
	_ = xml.EscapeText(&text, []byte(message))
	w.Header().Set("Content-Type", "text/xml; charset=utf-8")
	w.WriteHeader(http.StatusInternalServerError)
	fmt.Fprintf(w, "%s"+soapEnvelope, xml.Header, fmt.Sprintf(`<soapenv:Fault><faultcode>ServerFaultCode</faultcode>`+
		`<faultstring>%s</faultstring><detail><%sFault xmlns="urn:vim25" xsi:type="%s">%s</%sFault></detail>`+
		`</soapenv:Fault>`, text.String(), faultType, faultType, detail, faultType))
}
