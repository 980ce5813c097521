package manifests

import (
	"context"
	"fmt"
	"sort"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	extvalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateCRD runs the API server's validation of a CRD on create (it
// includes the structural schema rules) and returns its errors.
func ValidateCRD(crd *apiextv1.CustomResourceDefinition) (field.ErrorList, error) {
	var internal apiextensions.CustomResourceDefinition
	if err := apiextv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(crd, &internal, nil); err != nil {
		return nil, fmt.Errorf("convert CRD %s: %w", crd.Name, err)
	}
	// The API server's create strategy records the storage version
	// before validating.
	for _, v := range internal.Spec.Versions {
		if v.Storage {
			internal.Status.StoredVersions = append(internal.Status.StoredVersions, v.Name)
		}
	}
	return extvalidation.ValidateCustomResourceDefinition(context.Background(), &internal), nil
}

// Validator checks custom resources against a CRD's schema as the API
// server does on create: it prunes unknown fields, then validates.
type Validator struct {
	structural *structuralschema.Structural
	validator  apiservervalidation.SchemaValidator
}

// NewValidator returns the validator of the CRD's served version.
func NewValidator(crd *apiextv1.CustomResourceDefinition) (*Validator, error) {
	var internal apiextensions.JSONSchemaProps
	if err := apiextv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(crd.Spec.Versions[0].Schema.OpenAPIV3Schema, &internal, nil); err != nil {
		return nil, fmt.Errorf("convert schema of %s: %w", crd.Name, err)
	}
	s, err := structuralschema.NewStructural(&internal)
	if err != nil {
		return nil, fmt.Errorf("structural schema of %s: %w", crd.Name, err)
	}
	v, _, err := apiservervalidation.NewSchemaValidator(&internal)
	if err != nil {
		return nil, fmt.Errorf("schema validator of %s: %w", crd.Name, err)
	}
	return &Validator{structural: s, validator: v}, nil
}

// Validate prunes obj (a decoded JSON object) and validates what is
// left; it returns the pruned field paths (what kubectl warns about as
// unknown fields) and the validation errors.
func (v *Validator) Validate(obj map[string]any) (pruned []string, errs field.ErrorList) {
	pruned = pruning.PruneWithOptions(obj, v.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})
	sort.Strings(pruned)
	return pruned, apiservervalidation.ValidateCustomResource(nil, obj, v.validator)
}
