package policyapi

import "strings"

// Warning is something a document says that apiary accepts but that its
// author should fix, such as a field Cilium tolerates in the wrong place.
// Policies carry their warnings (Policy.Warnings); the simulate command
// prints them and the agent logs them.
type Warning struct {
	// Document names the file, document and object, as the lines of a
	// DocumentError do: "policy.yaml: document 1 (CiliumNetworkPolicy
	// default/rule1)".
	Document string `json:"document"`
	// Field is the path of the field ("description").
	Field string `json:"field"`
	// Message says what is wrong and what apiary made of it.
	Message string `json:"message"`
}

// String formats the warning as "<document>: <field>: <message>".
func (w Warning) String() string { return w.Document + ": " + w.Field + ": " + w.Message }

// warnf records a warning about the field at path.
func (d *decoder) warnf(path, msg string) {
	d.warnings = append(d.warnings, &FieldError{Field: path, Err: warningText(msg)})
}

// warningText is a warning's message, kept as an error until the
// document it belongs to is known.
type warningText string

func (w warningText) Error() string { return string(w) }

// documentWarnings names the decoder's warnings with their document.
func (d *decoder) documentWarnings(doc *DocumentError) []Warning {
	if len(d.warnings) == 0 {
		return nil
	}
	name := strings.TrimSuffix(doc.prefix(), ": ")
	out := make([]Warning, len(d.warnings))
	for i, w := range d.warnings {
		out[i] = Warning{Document: name, Field: w.Field, Message: w.Err.Error()}
	}
	return out
}
