// Starts Swagger UI on the API reference page. It is a file of its own, not
// an inline script, so that the page's Content-Security-Policy allows
// scripts from the service only.
"use strict";

window.ui = SwaggerUIBundle({
  // Relative to the page, so that the page works behind a path prefix too.
  url: new URL("openapi.yaml", document.baseURI).href,
  dom_id: "#swagger-ui",
  deepLinking: true,
  // The validator badge would send the document to validator.swagger.io.
  validatorUrl: null,
  displayRequestDuration: true,
  // Every operation opens ready to send, with no "Try it out" click.
  tryItOutEnabled: true,
  // A token pasted in the Authorize dialog is kept for this tab only.
  persistAuthorization: false,
});
