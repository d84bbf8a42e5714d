export declare const PI_VERSION: string
/** The install's folder (`node_modules` inside), installing it first when missing. */
export declare function installPi(): string
