import { jsonResponse } from '../errors.js';
import type { Operations } from '../api.js';

export const infoOperations: Operations = {
  async getInfo({ services, apiUrl }) {
    const { settings } = services.platform;
    return jsonResponse(200, {
      apiUrl,
      consoleUrl: settings.consoleUrl ?? apiUrl,
      version: settings.version,
      featureToggles: settings.featureToggles,
      enabledServices: settings.enabledServices,
      passwordSignup: false,
      branding: { name: 'Linked Data Platform' },
    });
  },
};
