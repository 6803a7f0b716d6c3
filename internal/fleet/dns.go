package fleet

import (
	"io/fs"
	"strings"

	"github.com/regionctl/regionctl/internal/config"
	"github.com/regionctl/regionctl/internal/schema"
)

// DelegatedZones are the DNS zones the fleet's layers say a parent domain
// delegates to the zone a cluster's apply makes: each regional cluster's
// platform_api.domain with platform_api.zone_delegated true, and each
// management cluster's hypershift.public_zone with
// hypershift.public_zone_delegated true (schema.Delegation), lower-cased. The emulator's model
// of public DNS reaches these (awsemu.Gate.ModelPublicDNS): in the
// emulated runs, the operator's NS records exist exactly where the config
// says they do.
func DelegatedZones(f *config.Fleet) map[string]bool {
	out := map[string]bool{}
	for _, c := range f.Clusters {
		if c.Effective == nil {
			continue
		}
		zone, flag := schema.Delegation(c.Type)
		z, d := c.Effective.Lookup(strings.Split(zone, ".")...), c.Effective.Lookup(strings.Split(flag, ".")...)
		if z != nil && z.Kind == config.String && d != nil && d.Kind == config.Bool && d.Bool {
			out[strings.ToLower(strings.TrimSuffix(z.Str, "."))] = true
		}
	}
	return out
}

// DelegatedZonesOf loads the fleet of fsys (config/) and returns its
// DelegatedZones; an error when the fleet does not load.
func DelegatedZonesOf(fsys fs.FS) (map[string]bool, error) {
	checker, err := schema.New(schema.Options{Version: "delegated-zones"})
	if err != nil {
		return nil, err
	}
	f, diags := Load(fsys, "config", checker)
	if diags.HasErrors() {
		return nil, diags.Err()
	}
	return DelegatedZones(f), nil
}
