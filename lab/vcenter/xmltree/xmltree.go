// Package xmltree keeps an XML message as a tree of elements that can be changed in place and written out again
// in the form it came in: how the lab rewrites hostd's SOAP messages for the host view.
package xmltree

import (
	"bytes"
	"encoding/xml"
	"io"
	"strings"
)

// Node is one element of a SOAP message, kept with its prefixes as written (encoding/xml's RawToken), so that a
// message can be changed in place and written out again in the same form.
type Node struct {
	start    xml.StartElement
	parent   *Node
	children []interface{} // *Node, xml.CharData, xml.Comment, xml.ProcInst or xml.Directive
}

// Parse reads a whole message; the returned node is a nameless root that holds the document's top-level tokens.
func Parse(data []byte) (*Node, error) {
	root := &Node{}
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
			child := &Node{start: t.Copy(), parent: current}
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

// Bytes writes the tree out.
func (n *Node) Bytes() []byte {
	var out bytes.Buffer
	n.write(&out)
	return out.Bytes()
}

func (n *Node) write(out *bytes.Buffer) {
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
		case *Node:
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

// Name is the element's local name.
func (n *Node) Name() string { return n.start.Name.Local }

// Attr is the value of an attribute without a prefix.
func (n *Node) Attr(local string) (string, bool) {
	for _, a := range n.start.Attr {
		if a.Name.Space == "" && a.Name.Local == local {
			return a.Value, true
		}
	}
	return "", false
}

// SetAttr changes the value of an attribute without a prefix, when the element has it.
func (n *Node) SetAttr(local, value string) {
	for i, a := range n.start.Attr {
		if a.Name.Space == "" && a.Name.Local == local {
			n.start.Attr[i].Value = value
			return
		}
	}
}

// Text is the element's character data, when it has no child elements.
func (n *Node) Text() (string, bool) {
	var text strings.Builder
	for _, child := range n.children {
		switch c := child.(type) {
		case *Node:
			return "", false
		case xml.CharData:
			text.Write(c)
		}
	}
	return strings.TrimSpace(text.String()), true
}

// SetText makes value the element's only content.
func (n *Node) SetText(value string) {
	n.children = []interface{}{xml.CharData(value)}
}

// Elements are the element's child elements.
func (n *Node) Elements() []*Node {
	var out []*Node
	for _, child := range n.children {
		if c, ok := child.(*Node); ok {
			out = append(out, c)
		}
	}
	return out
}

// Child is n's first child element with the given local name.
func (n *Node) Child(local string) *Node {
	for _, c := range n.Elements() {
		if c.Name() == local {
			return c
		}
	}
	return nil
}

// Find is the first element below n (depth first) with the given local name.
func (n *Node) Find(local string) *Node {
	for _, c := range n.Elements() {
		if c.Name() == local {
			return c
		}
		if found := c.Find(local); found != nil {
			return found
		}
	}
	return nil
}

// Remove takes the element out of its parent.
func (n *Node) Remove() {
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

// MoRef is what an element says when it is a managed object reference: a type attribute and text only.
func (n *Node) MoRef() (typ, value string, ok bool) {
	typ, hasType := n.Attr("type")
	if !hasType {
		return "", "", false
	}
	value, ok = n.Text()
	return typ, value, ok
}

// Walk calls f on n and every element below it; f may remove the element it is given or an ancestor's other
// children, since the children are listed before f runs on them.
func (n *Node) Walk(f func(*Node)) {
	for _, c := range n.Elements() {
		f(c)
		c.Walk(f)
	}
}

// Parent is the element that holds n (nil for the root and for removed elements).
func (n *Node) Parent() *Node { return n.parent }

// SetElements makes elements the element's only content.
func (n *Node) SetElements(elements ...*Node) {
	n.children = nil
	for _, e := range elements {
		e.parent = n
		n.children = append(n.children, e)
	}
}

// NewElement is an element of that local name with the attributes and the text.
func NewElement(name string, attrs []xml.Attr, text string) *Node {
	return &Node{start: xml.StartElement{Name: xml.Name{Local: name}, Attr: attrs},
		children: []interface{}{xml.CharData(text)}}
}
