/** How long a token made by `pgmcp token create` lives when --expires is not given. */
export const DEFAULT_TOKEN_LIFETIME = '90d';
