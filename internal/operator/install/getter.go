package install

import (
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// restGetter hands helm a fixed *rest.Config (helm asks for a
// genericclioptions.RESTClientGetter, which kubectl builds from flags).
type restGetter struct {
	cfg       *rest.Config
	namespace string
	discovery discovery.CachedDiscoveryInterface
}

func newRESTGetter(cfg *rest.Config, namespace string) (*restGetter, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &restGetter{cfg: cfg, namespace: namespace, discovery: memory.NewMemCacheClient(dc)}, nil
}

func (g *restGetter) ToRESTConfig() (*rest.Config, error) { return rest.CopyConfig(g.cfg), nil }

func (g *restGetter) ToDiscoveryClient() (discovery.CachedDiscoveryInterface, error) {
	return g.discovery, nil
}

func (g *restGetter) ToRESTMapper() (meta.RESTMapper, error) {
	m := restmapper.NewDeferredDiscoveryRESTMapper(g.discovery)
	return restmapper.NewShortcutExpander(m, g.discovery, nil), nil
}

func (g *restGetter) ToRawKubeConfigLoader() clientcmd.ClientConfig { return fixedClientConfig{g} }

// fixedClientConfig is the clientcmd.ClientConfig of a restGetter.
type fixedClientConfig struct{ g *restGetter }

func (c fixedClientConfig) RawConfig() (clientcmdapi.Config, error) {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["oplab"] = &clientcmdapi.Cluster{Server: c.g.cfg.Host}
	cfg.Contexts["oplab"] = &clientcmdapi.Context{Cluster: "oplab", Namespace: c.g.namespace}
	cfg.CurrentContext = "oplab"
	return *cfg, nil
}

func (c fixedClientConfig) ClientConfig() (*rest.Config, error) { return rest.CopyConfig(c.g.cfg), nil }

func (c fixedClientConfig) Namespace() (string, bool, error) { return c.g.namespace, true, nil }

func (c fixedClientConfig) ConfigAccess() clientcmd.ConfigAccess {
	return clientcmd.NewDefaultClientConfigLoadingRules()
}
