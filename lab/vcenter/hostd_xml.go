package main

import (
	"bytes"
	"encoding/xml"
	"io"
	"strings"
)

// xmlNode is one element of a SOAP message, kept with its prefixes as written (encoding/xml's RawToken), so that a
// message can be changed in place and written out again in the same form.
type xmlNode struct {
	start    xml.StartElement
	parent   *xmlNode
	children []interface{} // *xmlNode, xml.CharData, xml.Comment, xml.ProcInst or xml.Directive
}

// parseXML reads a whole message; the returned node is a nameless root that holds the document's top-level tokens.
func parseXML(data []byte) (*xmlNode, error) {
	root := &xmlNode{}
	current := root
	dec := xml.NewDecoder(bytes.NewReader(data))
	for {
		tok, err := dec.RawToken()
		if err == io.EOF {
			return root, nil
		}
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			child := &xmlNode{start: t.Copy(), parent: current}
			current.children = append(current.children, child)
			current = child
		case xml.EndElement:
			if current.parent != nil {
				current = current.parent
			}
		default:
			current.children = append(current.children, xml.CopyToken(tok))
		}
	}
}

// The escapes a message's text needs; unlike xml.EscapeText they keep line breaks as they are.
var (
	textEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")
	attrEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;")
)

func qualified(name xml.Name) string {
	if name.Space == "" {
		return name.Local
	}
	return name.Space + ":" + name.Local
}

func (n *xmlNode) bytes() []byte {
	var out bytes.Buffer
	n.write(&out)
	return out.Bytes()
}

func (n *xmlNode) write(out *bytes.Buffer) {
	if n.start.Name.Local != "" {
		out.WriteString("<" + qualified(n.start.Name))
		for _, a := range n.start.Attr {
			out.WriteString(" " + qualified(a.Name) + `="`)
			out.WriteString(attrEscaper.Replace(a.Value))
			out.WriteString(`"`)
		}
		out.WriteString(">")
	}
	for _, child := range n.children {
		switch c := child.(type) {
		case *xmlNode:
			c.write(out)
		case xml.CharData:
			out.WriteString(textEscaper.Replace(string(c)))
		case xml.Comment:
			out.WriteString("<!--" + string(c) + "-->")
		case xml.ProcInst:
			out.WriteString("<?" + c.Target + " " + string(c.Inst) + "?>")
		case xml.Directive:
			out.WriteString("<!" + string(c) + ">")
		}
	}
	if n.start.Name.Local != "" {
		out.WriteString("</" + qualified(n.start.Name) + ">")
	}
}

func (n *xmlNode) name() string { return n.start.Name.Local }

// attr is the value of an attribute without a prefix.
func (n *xmlNode) attr(local string) (string, bool) {
	for _, a := range n.start.Attr {
		if a.Name.Space == "" && a.Name.Local == local {
			return a.Value, true
		}
	}
	return "", false
}

func (n *xmlNode) setAttr(local, value string) {
	for i, a := range n.start.Attr {
		if a.Name.Space == "" && a.Name.Local == local {
			n.start.Attr[i].Value = value
			return
		}
	}
}

// text is the element's character data, when it has no child elements.
func (n *xmlNode) text() (string, bool) {
	var text strings.Builder
	for _, child := range n.children {
		switch c := child.(type) {
		case *xmlNode:
			return "", false
		case xml.CharData:
			text.Write(c)
		}
	}
	return strings.TrimSpace(text.String()), true
}

func (n *xmlNode) setText(value string) {
	n.children = []interface{}{xml.CharData(value)}
}

func (n *xmlNode) elements() []*xmlNode {
	var out []*xmlNode
	for _, child := range n.children {
		if c, ok := child.(*xmlNode); ok {
			out = append(out, c)
		}
	}
	return out
}

// child is n's first child element with the given local name.
func (n *xmlNode) child(local string) *xmlNode {
	for _, c := range n.elements() {
		if c.name() == local {
			return c
		}
	}
	return nil
}

// find is the first element below n (depth first) with the given local name.
func (n *xmlNode) find(local string) *xmlNode {
	for _, c := range n.elements() {
		if c.name() == local {
			return c
		}
		if found := c.find(local); found != nil {
			return found
		}
	}
	return nil
}

func (n *xmlNode) remove() {
	if n.parent == nil {
		return
	}
	kept := n.parent.children[:0]
	for _, child := range n.parent.children {
		if child != interface{}(n) {
			kept = append(kept, child)
		}
	}
	n.parent.children = kept
	n.parent = nil
}

// moRef is what an element says when it is a managed object reference: a type attribute and text only.
func (n *xmlNode) moRef() (typ, value string, ok bool) {
	typ, hasType := n.attr("type")
	if !hasType {
		return "", "", false
	}
	value, ok = n.text()
	return typ, value, ok
}

// walk calls f on n and every element below it; f may remove the element it is given or an ancestor's other
// children, since the children are listed before f runs on them.
func (n *xmlNode) walk(f func(*xmlNode)) {
	for _, c := range n.elements() {
		f(c)
		c.walk(f)
	}
}
