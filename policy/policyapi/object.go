package policyapi

import "maps"

// objectMeta identifies a policy object.
type objectMeta struct {
	kind                 Kind
	namespace, name, uid string
}

// apiVersions are the supported kinds and their API versions.
var apiVersions = map[Kind]string{
	KindNetworkPolicy:                  "networking.k8s.io/v1",
	KindCiliumNetworkPolicy:            "cilium.io/v2",
	KindCiliumClusterwideNetworkPolicy: "cilium.io/v2",
}

// listKinds are the supported list kinds: the item kind ("" for any) and
// the API version.
var listKinds = map[string]struct {
	item       Kind
	apiVersion string
}{
	"List":                               {"", "v1"},
	"NetworkPolicyList":                  {KindNetworkPolicy, "networking.k8s.io/v1"},
	"CiliumNetworkPolicyList":            {KindCiliumNetworkPolicy, "cilium.io/v2"},
	"CiliumClusterwideNetworkPolicyList": {KindCiliumClusterwideNetworkPolicy, "cilium.io/v2"},
}

const supportedKinds = "NetworkPolicy, CiliumNetworkPolicy, CiliumClusterwideNetworkPolicy or a List of them"

// header reads apiVersion, kind and metadata. It returns the object only
// when its kind is supported.
func (d *decoder) header(v any, opts Options) (objectMeta, map[string]any) {
	var meta objectMeta
	m, ok := v.(map[string]any)
	if !ok {
		d.failf("", "a document must be an object, not %s", typeName(v))
		return meta, nil
	}
	apiVersion, okVersion := d.requiredString(m, "", "apiVersion")
	kind, okKind := d.requiredString(m, "", "kind")
	if !okKind {
		return meta, nil
	}
	want, known := apiVersions[Kind(kind)]
	if !known {
		d.failf("kind", "%q is not a supported kind (want %s)", kind, supportedKinds)
		return meta, nil
	}
	meta.kind = Kind(kind)
	if okVersion && apiVersion != want {
		d.failf("apiVersion", "%q is not supported for %s (want %s)", apiVersion, kind, want)
	}
	d.metadata(m, &meta, opts)
	return meta, m
}

// metadata reads name, namespace and uid. Other metadata (labels,
// annotations, resourceVersion, ...) is Kubernetes bookkeeping and is
// ignored.
func (d *decoder) metadata(m map[string]any, meta *objectMeta, opts Options) {
	v, ok := get(m, "metadata")
	if !ok {
		d.failf("metadata.name", "required")
		return
	}
	mm, ok := v.(map[string]any)
	if !ok {
		d.failf("metadata", "must be an object, not %s", typeName(v))
		return
	}
	if name, ok := d.requiredString(mm, "metadata", "name"); ok {
		meta.name = name
		if msg := checkDNSSubdomain(name); msg != "" {
			d.failf("metadata.name", "%q: %s", name, msg)
		}
	}
	if uv, ok := get(mm, "uid"); ok {
		meta.uid, _ = d.str("metadata.uid", uv)
	}
	nv, hasNS := get(mm, "namespace")
	var ns string
	if hasNS {
		ns, _ = d.str("metadata.namespace", nv)
	}
	switch {
	case !meta.kind.IsNamespaced():
		if ns != "" {
			d.failf("metadata.namespace", "must not be set: a %s is not namespaced", meta.kind)
		}
	default:
		meta.namespace = opts.namespaceOrDefault(ns)
		if msg := checkDNSLabel(meta.namespace); msg != "" {
			d.failf("metadata.namespace", "%q: %s", meta.namespace, msg)
		}
	}
}

// isList reports whether v is a List document.
func isList(v any) bool {
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	kind, _ := m["kind"].(string)
	_, ok = listKinds[kind]
	return ok
}

var listSpec = objectSpec{fields: []string{"apiVersion", "kind", "metadata", "items"}}

// listItems returns the items of a List document and the kind its items
// must have ("" for a v1 List). Items of a typed list
// (NetworkPolicyList, ...) may leave out apiVersion and kind.
func listItems(file string, doc int, m map[string]any) ([]any, Kind, error) {
	d := &decoder{}
	kind := m["kind"].(string)
	lk := listKinds[kind]
	d.object("", m, listSpec)
	if apiVersion, ok := d.requiredString(m, "", "apiVersion"); ok && apiVersion != lk.apiVersion {
		d.failf("apiVersion", "%q is not supported for %s (want %s)", apiVersion, kind, lk.apiVersion)
	}
	var items []any
	if v, ok := get(m, "items"); ok {
		items, _ = d.list("items", v)
	} else {
		d.failf("items", "required")
	}
	if len(d.errs) > 0 {
		return nil, "", &DocumentError{File: file, Document: doc, Item: -1, Kind: Kind(kind), Errs: d.errs}
	}
	if lk.item == "" {
		return items, "", nil
	}
	out := make([]any, len(items))
	for i, item := range items {
		out[i] = item
		if im, ok := item.(map[string]any); ok {
			im = maps.Clone(im)
			setDefault(im, "kind", string(lk.item))
			setDefault(im, "apiVersion", lk.apiVersion)
			out[i] = im
		}
	}
	return out, lk.item, nil
}

func setDefault(m map[string]any, key, value string) {
	if _, present := get(m, key); !present {
		m[key] = value
	}
}
