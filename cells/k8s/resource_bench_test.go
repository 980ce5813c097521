package k8s

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/apiary-net/apiary/cells/cell"
)

// listOnly lists objs, or streams them to a watch-list, and then
// watches nothing.
type listOnly struct{ objs []unstructured.Unstructured }

func (l listOnly) List(metav1.ListOptions) (runtime.Object, error) {
	list := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "cilium.io/v2", "kind": "CiliumEndpointList",
		"metadata": map[string]any{"resourceVersion": "1"}}}
	for _, o := range l.objs {
		list.Items = append(list.Items, *o.DeepCopy())
	}
	return list, nil
}

// Watch streams the objects and the end-of-listing bookmark when asked
// for the initial events, as the API server does for client-go's
// watch-list.
func (l listOnly) Watch(o metav1.ListOptions) (watch.Interface, error) {
	w := watch.NewFakeWithChanSize(len(l.objs)+1, false)
	if o.SendInitialEvents != nil && *o.SendInitialEvents {
		for _, obj := range l.objs {
			w.Add(obj.DeepCopy())
		}
		bm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "cilium.io/v2", "kind": "CiliumEndpoint",
			"metadata": map[string]any{"resourceVersion": "1",
				"annotations": map[string]any{metav1.InitialEventsAnnotationKey: "true"}}}}
		w.Action(watch.Bookmark, bm)
	}
	return w, nil
}

func benchCEPs(n int) []unstructured.Unstructured {
	out := make([]unstructured.Unstructured, n)
	for i := range out {
		out[i].Object = map[string]any{"apiVersion": "cilium.io/v2", "kind": "CiliumEndpoint",
			"metadata": map[string]any{"name": fmt.Sprintf("pod-%d", i), "namespace": fmt.Sprintf("cep-%d", i%10),
				"resourceVersion": "1"},
			"status": map[string]any{"identity": map[string]any{"id": int64(256 + i%500)}}}
	}
	return out
}

// BenchmarkListing: a bare informer synced over 10,000 objects, and a
// resource's Events stream delivering them and Sync.
func BenchmarkListing(b *testing.B) {
	lw := listOnly{objs: benchCEPs(10000)}
	b.Run("informer", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			inf := cache.NewSharedIndexInformer(lw, &unstructured.Unstructured{}, 0,
				cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
			stop := make(chan struct{})
			var wg sync.WaitGroup
			wg.Go(func() { inf.Run(stop) })
			for !inf.HasSynced() {
				time.Sleep(time.Millisecond)
			}
			close(stop)
			wg.Wait()
		}
	})
	b.Run("events", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			lc := &cell.DefaultLifecycle{}
			r := newResource[*unstructured.Unstructured](resourceSpec{name: "bench", object: &unstructured.Unstructured{},
				listWatch: func(Clientset) cache.ListerWatcher { return lw }},
				&clientset{cfg: &rest.Config{}}, newAPIRegistry(), lc, slog.New(slog.DiscardHandler))
			if err := lc.Start(context.Background(), slog.New(slog.DiscardHandler), stopContext); err != nil {
				b.Fatal(err)
			}
			n := 0
			for ev := range r.Events(context.Background()) {
				if ev.Kind == Sync {
					break
				}
				n++
			}
			if n != len(lw.objs) {
				b.Fatalf("%d events before Sync, want %d", n, len(lw.objs))
			}
			_ = lc.Stop(context.Background(), slog.New(slog.DiscardHandler))
		}
	})
}

func stopContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), time.Minute)
}
