// Who may use a tool (or a resource, a prompt): the one gate every front end asks, the MCP
// methods and the chat agent alike, and the one way tools.<name>.roles becomes a tool's gate.
import { holdsRole, type Principal } from '../core/principal.js';
import type { ToolSpec } from '../core/specs.js';

/** Anything a list holds: some callers may not use it. */
export interface Gated {
  allows?(principal: Principal): boolean;
  requiredRoles?: readonly string[];
  inScope?(principal: Principal): boolean;
}

/** Whether the caller can know of the item at all (see ToolSpec.inScope). */
export const inScope = (item: Gated, principal: Principal): boolean =>
  item.inScope === undefined || item.inScope(principal);

/** Whether the caller may use the item: it is in scope and its gate lets the caller through. */
export const canUse = (item: Gated, principal: Principal): boolean =>
  inScope(item, principal) && (item.allows === undefined || item.allows(principal));

/** tools.<name>.roles as a tool's gate: only callers with one of the roles; none listed: open. */
export function roleGate(roles: readonly string[]): Pick<ToolSpec, 'allows' | 'requiredRoles'> {
  return roles.length > 0
    ? { allows: (principal) => holdsRole(principal, roles), requiredRoles: roles }
    : {};
}
