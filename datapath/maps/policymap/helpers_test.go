package policymap_test

import "github.com/apiary-net/apiary/policy/identity"

func identityOf(id uint32) identity.NumericIdentity { return identity.NumericIdentity(id) }
