import { jsonResponse } from '../errors.js';
import type { Operations } from '../api.js';
import { checkQueryParams } from '../query-params.js';

export const infoOperations: Operations = checkQueryParams({
  async getInfo({ services, apiUrl }) {
    const { settings } = services.platform;
    // The flows switches are the administrator's (stored), not the deployment's defaults.
    const switches = await services.flows.getSwitches();
    return jsonResponse(200, {
      apiUrl,
      // The console is served at /console beside the API (embedded; CloudFront on AWS), unless CONSOLE_URL says elsewhere.
      consoleUrl: settings.consoleUrl ?? `${apiUrl}/console`,
      version: settings.version,
      featureToggles: { ...settings.featureToggles, flows: switches.flowsEnabled, flowsSparqlUpdateTask: switches.sparqlUpdateTaskEnabled },
      enabledServices: settings.enabledServices,
      passwordSignup: false,
      branding: { name: 'Linked Data Platform' },
    });
  },
});
