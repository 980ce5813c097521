package k8spolicy_test

import corev1 "k8s.io/api/core/v1"

type corev1Protocol = corev1.Protocol

func ptr[T any](v T) *T { return &v }
