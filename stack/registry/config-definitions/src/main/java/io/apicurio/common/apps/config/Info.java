package io.apicurio.common.apps.config;

import jakarta.enterprise.util.Nonbinding;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Documentation metadata of a configuration property: the 3.0.6 annotation with the category typed
 * as {@link ConfigPropertyCategory}, as Apicurio Registry 3.0.9's classes use it.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target({ ElementType.FIELD, ElementType.METHOD })
public @interface Info {

    @Nonbinding
    ConfigPropertyCategory category() default ConfigPropertyCategory.CATEGORY_HIDDEN;

    @Nonbinding
    String description() default "";

    @Nonbinding
    String availableSince() default "";

    @Nonbinding
    String registryAvailableSince() default "";

    @Nonbinding
    String studioAvailableSince() default "";

    @Nonbinding
    String[] seeAlso() default {};

    @Nonbinding
    String[] dependsOn() default {};
}
