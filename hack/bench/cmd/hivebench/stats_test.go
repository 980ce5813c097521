package main

import (
	"testing"
	"time"
)

func TestSummarize(t *testing.T) {
	tests := []struct {
		name string
		give []time.Duration
		want summary
	}{
		{name: "one", give: []time.Duration{7}, want: summary{median: 7, p90: 7}},
		{name: "odd unsorted", give: []time.Duration{3, 1, 2}, want: summary{median: 2, p90: 3}},
		{name: "even", give: []time.Duration{4, 1, 3, 2}, want: summary{median: 2, p90: 4}},
		{
			name: "ten",
			give: []time.Duration{10, 9, 8, 7, 6, 5, 4, 3, 2, 1},
			want: summary{median: 5, p90: 9},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := summarize(tt.give); got != tt.want {
				t.Errorf("summarize(%v) = %+v, want %+v", tt.give, got, tt.want)
			}
		})
	}
}
