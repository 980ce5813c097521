package policyapi

import (
	"regexp"
	"strings"
)

// The checks below follow Kubernetes' apimachinery validation, so that a
// document apiary accepts is one the API server would accept. Each returns
// "" when the input is valid and otherwise what is wrong with it.

var (
	qualifiedNamePart = regexp.MustCompile(`^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$`)
	labelValuePattern = regexp.MustCompile(`^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$`)
	dnsLabelPattern   = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	dnsSubdomainPart  = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
)

// checkQualifiedName checks a label key: an optional DNS subdomain prefix
// and '/', then a name of at most 63 alphanumerics, '-', '_' and '.'.
func checkQualifiedName(s string) string {
	prefix, name, hasPrefix := strings.Cut(s, "/")
	if !hasPrefix {
		name = s
	} else {
		if prefix == "" {
			return "prefix before '/' must not be empty"
		}
		if msg := checkDNSSubdomain(prefix); msg != "" {
			return "prefix " + msg
		}
	}
	switch {
	case name == "":
		return "name must not be empty"
	case len(name) > 63:
		return "name must be at most 63 characters"
	case !qualifiedNamePart.MatchString(name):
		return "name must be alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric"
	}
	return ""
}

// checkLabelValue checks a label value: empty, or at most 63
// alphanumerics, '-', '_' and '.', starting and ending with an
// alphanumeric.
func checkLabelValue(s string) string {
	switch {
	case len(s) > 63:
		return "must be at most 63 characters"
	case !labelValuePattern.MatchString(s):
		return "must be alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric"
	}
	return ""
}

// checkDNSLabel checks a namespace name (RFC 1123 label).
func checkDNSLabel(s string) string {
	switch {
	case s == "":
		return "must not be empty"
	case len(s) > 63:
		return "must be at most 63 characters"
	case !dnsLabelPattern.MatchString(s):
		return "must be lower-case alphanumerics or '-', starting and ending with an alphanumeric"
	}
	return ""
}

// checkDNSSubdomain checks an object name (RFC 1123 subdomain).
func checkDNSSubdomain(s string) string {
	switch {
	case s == "":
		return "must not be empty"
	case len(s) > 253:
		return "must be at most 253 characters"
	case !dnsSubdomainPart.MatchString(s):
		return "must be lower-case alphanumerics, '-' or '.', starting and ending with an alphanumeric"
	}
	return ""
}

// CheckPortName checks an IANA service name, the syntax of named ports
// (IANA_SVC_NAME, as Kubernetes and Cilium check container port names):
// 1-15 lower-case alphanumerics and '-', with at least one letter, no
// leading, trailing or doubled '-'. It returns what is wrong with s, to
// follow "must" in a message, or "" for a valid name. Policy documents,
// the endpoint API and restored endpoints all check names with it.
func CheckPortName(s string) string {
	switch {
	case s == "" || len(s) > 15:
		return "must be 1-15 characters"
	case strings.Trim(s, "abcdefghijklmnopqrstuvwxyz0123456789-") != "":
		return "must be lower-case alphanumerics or '-'"
	case strings.HasPrefix(s, "-") || strings.HasSuffix(s, "-") || strings.Contains(s, "--"):
		return "must not start or end with '-' or contain '--'"
	case strings.Trim(s, "0123456789-") == "":
		return "must contain a letter"
	}
	return ""
}
