package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/policy"
)

func TestBadFlags(t *testing.T) {
	tests := []struct {
		name string
		give string
		want string
	}{
		{name: "bad IP", give: "--endpoint=app=web@10.0.1.300",
			want: `embed: invalid configuration: --endpoint "app=web@10.0.1.300": "10.0.1.300" is not an IP address` + "\n"},
		{name: "no labels", give: "--endpoint=@10.0.1.5",
			want: `embed: invalid configuration: --endpoint "@10.0.1.5": no labels` + "\n"},
		{name: "bad label", give: "--endpoint=:web",
			want: `embed: invalid configuration: --endpoint ":web": label ":web": empty source` + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), []string{tt.give}, &stdout, &stderr)
			if code != 1 || !strings.HasSuffix(stderr.String(), tt.want) {
				t.Errorf("= %d %q, want 1 and %q", code, stderr.String(), tt.want)
			}
		})
	}
}

func TestFormatKey(t *testing.T) {
	tests := []struct {
		give policy.Key
		deny bool
		want string
	}{
		{give: policy.Key{Direction: policy.Ingress}, want: "ingress identity any any allow"},
		{give: policy.Key{Identity: 257, Direction: policy.Ingress, Proto: policy.ProtoTCP, Port: 80, PrefixLen: 16},
			want: "ingress identity 257 tcp/80 allow"},
		{give: policy.Key{Identity: 257, Direction: policy.Egress, Proto: policy.ProtoUDP, Port: 8080, PrefixLen: 14},
			deny: true, want: "egress identity 257 udp/8080-8083 deny"},
		{give: policy.Key{Direction: policy.Egress, Proto: policy.ProtoSCTP}, want: "egress identity any sctp allow"},
	}
	for _, tt := range tests {
		if got := formatKey(tt.give, policy.Entry{Deny: tt.deny}); got != tt.want {
			t.Errorf("formatKey(%v) = %q, want %q", tt.give, got, tt.want)
		}
	}
}
