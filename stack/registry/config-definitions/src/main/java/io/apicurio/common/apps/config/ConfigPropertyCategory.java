package io.apicurio.common.apps.config;

/**
 * Category of a documented configuration property, as referenced by Apicurio Registry 3.0.9's
 * {@code @Info(category = ...)} annotations.
 */
public enum ConfigPropertyCategory {
    CATEGORY_API("api"),
    CATEGORY_AUTH("auth"),
    CATEGORY_CACHE("cache"),
    CATEGORY_CCOMPAT("ccompat"),
    CATEGORY_DOWNLOAD("download"),
    CATEGORY_GITOPS("gitops"),
    CATEGORY_HEALTH("health"),
    CATEGORY_HIDDEN("hidden"),
    CATEGORY_IMPORT("import"),
    CATEGORY_LIMITS("limits"),
    CATEGORY_REDIRECTS("redirects"),
    CATEGORY_REST("rest"),
    CATEGORY_SEMVER("semver"),
    CATEGORY_STORAGE("storage"),
    CATEGORY_SYSTEM("system"),
    CATEGORY_UI("ui");

    private final String rawValue;

    ConfigPropertyCategory(String rawValue) {
        this.rawValue = rawValue;
    }

    public String getRawValue() {
        return rawValue;
    }
}
