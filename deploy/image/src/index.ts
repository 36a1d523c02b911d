// What the container image's checks share: the agreement between the Dockerfile and build-oci.sh
// (image-definition) and the verifier of the OCI layout build-oci.sh writes, which the image smoke
// e2e suite uses on a real build.
export { buildScriptPackages, dockerfileAptPackages, dockerfileEntrypoint } from './image-definition.js';
export { OCI_CONFIG, OCI_INDEX, OCI_LAYER_GZIP, OCI_MANIFEST, verifyOciLayout, type Descriptor, type ImageConfig, type OciImage } from './oci-layout.js';
