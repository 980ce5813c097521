package k8s

import (
	"fmt"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/rest"
)

// scheme holds only the built-in API groups the agent reads: core/v1,
// discovery.k8s.io/v1 and networking.k8s.io/v1 (and the meta/v1 types
// every API answers with: Status, WatchEvent, List options). client-go's
// full clientset registers all 57 groups of k8s.io/api and their apply
// configurations, which the agent never uses and which more than doubled
// the agent's compile time.
var (
	scheme = runtime.NewScheme()
	codecs = serializer.NewCodecFactory(scheme)
)

func init() {
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Version: "v1"})
	utilruntime.Must(corev1.AddToScheme(scheme))
	utilruntime.Must(discoveryv1.AddToScheme(scheme))
	utilruntime.Must(networkingv1.AddToScheme(scheme))
}

// typedREST returns a REST client of the API group version gv (under
// apiPath, "/api" for the core group, "/apis" for the others) that sends
// and reads protobuf, as client-go's informer factories ask for the
// built-in types: decoding 10,000 pods from JSON costs several times the
// CPU.
func typedREST(cfg *rest.Config, hc *http.Client, gv schema.GroupVersion, apiPath string) (rest.Interface, error) {
	c := rest.CopyConfig(cfg)
	c.GroupVersion = &gv
	c.APIPath = apiPath
	c.ContentType = "application/vnd.kubernetes.protobuf"
	c.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	c.NegotiatedSerializer = rest.CodecFactoryForGeneratedClient(scheme, codecs).WithoutConversion()
	rc, err := rest.RESTClientForConfigAndClient(c, hc)
	if err != nil {
		return nil, fmt.Errorf("create the Kubernetes %s client: %w", gv, err)
	}
	return rc, nil
}
