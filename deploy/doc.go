// Package deploy holds pitstop's Kubernetes manifests (*.yaml beside this
// file: the router's Deployment and Service in front of a StatefulSet of
// vLLM pods behind a headless Service) and, in its test, their check: each
// document parsed as YAML and validated against the Kubernetes schemas
// shipped in testdata (a hand-written subset of the API: kubeconform is in
// no registry this project can reach), then checked for what ties them
// together (selectors, the router's DNS name of the vLLM Service, vLLM's
// priority scheduling). It has no code of its own.
package deploy
